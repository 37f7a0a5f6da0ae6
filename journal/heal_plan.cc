#include "journal/heal_plan.h"

#include <algorithm>

namespace nbdk {
namespace {

std::string ImagePath(const VolumeRecord& r) {
  return r.pool + "/" + (r.rados_namespace.empty() ? "" : r.rados_namespace + "/") + r.image;
}

std::string_view Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string_view HealActionName(HealAction action) {
  switch (action) {
    case HealAction::kAdopt: return "Adopt";
    case HealAction::kReattach: return "Reattach";
    case HealAction::kExpired: return "Expired";
    case HealAction::kStaleBoot: return "StaleBoot";
    case HealAction::kSkip: return "Skip";
    case HealAction::kUnknownServer: return "UnknownServer";
  }
  return "?";
}

bool ServesRecord(const RbdNbdProcess& process, const VolumeRecord& record) {
  const std::vector<std::string>& argv = process.argv;
  if (argv.size() < 2 || Basename(argv[0]) != "rbd-nbd") return false;
  if (argv[1] != "map" && argv[1] != "attach") return false;
  bool cookie = false;
  for (size_t i = 2; i + 1 < argv.size(); ++i) {
    if (argv[i] == "--cookie" && argv[i + 1] == record.cookie) cookie = true;
  }
  std::string image = ImagePath(record);
  return cookie && std::find(argv.begin() + 2, argv.end(), image) != argv.end();
}

HealPlan PlanHeal(const VolumeRecord& record, std::string_view boot_id, const NbdDeviceView& device,
                  const std::vector<RbdNbdProcess>& processes) {
  const std::string& dev = record.nbd_device;
  if (record.state != "staged") {
    // A NodeStage cut short by the crash: kubelet retries it, and a retried
    // NodeStage over a non-staged record starts again from the key file.
    return {HealAction::kSkip, 0, "state '" + record.state + "': left for kubelet's retry of NodeStage"};
  }
  if (record.boot_id != boot_id) {
    return {HealAction::kStaleBoot, 0,
            "journaled under boot " + record.boot_id + ": the node rebooted, " + dev + " is gone; not re-mapped"};
  }
  if (!device.configured) {
    return {HealAction::kExpired, 0, dev + " is no longer configured in the kernel"};
  }
  if (device.backend_cookie != record.cookie) {
    return {HealAction::kExpired, 0,
            dev + " now has backend cookie '" + device.backend_cookie + "', not '" + record.cookie + "'"};
  }
  int chosen = 0;
  for (const RbdNbdProcess& p : processes) {
    if (!ServesRecord(p, record)) continue;
    if (chosen == 0 || p.pid == record.rbd_nbd_pid) chosen = p.pid;
  }
  if (chosen != 0) {
    std::string note = chosen == record.rbd_nbd_pid ? "" : " (journaled pid " + std::to_string(record.rbd_nbd_pid) + ")";
    return {HealAction::kAdopt, chosen, "rbd-nbd pid " + std::to_string(chosen) + " still serves " + dev + note};
  }
  switch (device.io) {
    case DeviceIo::kFailsAtOnce:
      return {HealAction::kExpired, 0,
              dev + " fails IO at once: the kernel's reattach window passed; a re-attach would hide lost writes"};
    case DeviceIo::kServes:
      return {HealAction::kUnknownServer, 0, dev + " serves IO but no rbd-nbd with cookie " + record.cookie +
                                                 " runs; left alone"};
    default:
      return {HealAction::kReattach, 0,
              "no rbd-nbd serves " + dev + " (journaled pid " + std::to_string(record.rbd_nbd_pid) +
                  "); the kernel still holds it with our cookie"};
  }
}

}  // namespace nbdk
