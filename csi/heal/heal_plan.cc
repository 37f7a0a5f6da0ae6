#include "csi/heal/heal_plan.h"

#include <optional>

#include "supervisor/rbd_nbd_argv.h"

namespace nbdk {
namespace {

// The command line of an rbd-nbd map or attach; nullopt for anything else.
std::optional<RbdNbdCommandLine> ServerCommandLine(const RbdNbdProcess& process) {
  if (process.argv.empty() || !IsRbdNbdProgram(process.argv[0])) return std::nullopt;
  auto line = ParseRbdNbdArgv(process.argv);
  if (!line.ok() || line->command == "unmap") return std::nullopt;
  return std::move(*line);
}

}  // namespace

std::string_view HealActionName(HealAction action) {
  switch (action) {
    case HealAction::kAdopt:
      return "Adopt";
    case HealAction::kReattach:
      return "Reattach";
    case HealAction::kExpired:
      return "Expired";
    case HealAction::kStaleBoot:
      return "StaleBoot";
    case HealAction::kSkip:
      return "Skip";
    case HealAction::kUnknownServer:
      return "UnknownServer";
  }
  return "?";
}

bool ServesRecord(const RbdNbdProcess& process, const VolumeRecord& record) {
  std::optional<RbdNbdCommandLine> line = ServerCommandLine(process);
  return line && line->request.cookie == record.cookie && line->request.image.Spec() == RecordedImage(record).Spec();
}

std::string IdentityProblem(const RbdNbdProcess& p, const VolumeRecord& r, const NbdDeviceView& device,
                            const ServerIdentity& expected) {
  std::string who = "pid " + std::to_string(p.pid);
  // " (deleted)": a package upgrade replaced the binary under the running
  // server; only root can write where the configured binary lives.
  if (p.exe != expected.exe && p.exe != expected.exe + " (deleted)") {
    return who + " runs '" + p.exe + "', not " + expected.exe;
  }
  if (p.uid != expected.uid || p.euid != expected.uid) {
    return who + " runs as uid " + std::to_string(p.uid) + "/" + std::to_string(p.euid) + ", not " +
           std::to_string(expected.uid);
  }
  std::optional<RbdNbdCommandLine> line = ServerCommandLine(p);
  if (!line) return who + " is not an rbd-nbd map or attach";
  if (line->command == "map") {
    if (p.pid == device.pid) return "";
    return who + " is a map but " + r.nbd_device + " was connected by pid " + std::to_string(device.pid);
  }
  // An attach: sysfs still names the original map (see the top of heal_plan.h).
  if (p.pid != r.rbd_nbd_pid) return who + " is an attach, not the journaled pid " + std::to_string(r.rbd_nbd_pid);
  if (line->device == r.nbd_device) return "";
  return who + " is an attach without --device " + r.nbd_device;
}

HealPlan PlanHeal(const VolumeRecord& record, std::string_view boot_id, const NbdDeviceView& device,
                  const std::vector<RbdNbdProcess>& processes, const ServerIdentity& expected) {
  const std::string& dev = record.nbd_device;
  if (record.state != VolumeState::kStaged) {
    // A NodeStage cut short by the crash: kubelet retries it, and a retried
    // NodeStage over a non-staged record starts again from the key file.
    return {HealAction::kSkip, 0,
            "state '" + std::string(VolumeStateName(record.state)) + "': left for kubelet's retry of NodeStage"};
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
  std::string refused;  // "; not adopted: ..." for the reason
  for (const RbdNbdProcess& p : processes) {
    if (!ServesRecord(p, record)) continue;
    if (std::string problem = IdentityProblem(p, record, device, expected); !problem.empty()) {
      refused += (refused.empty() ? "; not adopted: " : "; ") + problem;
      continue;
    }
    if (chosen == 0 || p.pid == record.rbd_nbd_pid) chosen = p.pid;
  }
  if (chosen != 0) {
    std::string note =
        chosen == record.rbd_nbd_pid ? "" : " (journaled pid " + std::to_string(record.rbd_nbd_pid) + ")";
    return {HealAction::kAdopt, chosen, "rbd-nbd pid " + std::to_string(chosen) + " still serves " + dev + note};
  }
  switch (device.io) {
    case DeviceIo::kFailsAtOnce:
      return {
          HealAction::kExpired, 0,
          dev + " fails IO at once: the kernel's reattach window passed; a re-attach would hide lost writes" + refused};
    case DeviceIo::kServes:
      return {HealAction::kUnknownServer, 0,
              dev + " serves IO but no rbd-nbd of ours with cookie " + record.cookie + " runs; left alone" + refused};
    default:
      return {HealAction::kReattach, 0,
              "no rbd-nbd serves " + dev + " (journaled pid " + std::to_string(record.rbd_nbd_pid) +
                  "); the kernel still holds it with our cookie" + refused};
  }
}

}  // namespace nbdk
