#include "csi/heal/heal_evidence.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "base/log.h"
#include "base/uv_handle.h"
#include "host/process_scan.h"
#include "netlink/nbd_device.h"
#include "netlink/nbd_sysfs.h"

namespace nbdk {
namespace {

constexpr size_t kProbeBytes = 4096;  // one logical block, aligned for O_DIRECT

// One round of ProbeReattaches: each read settles its plan, and the
// deadline settles those still blocked. Loop thread only, except that a
// read's `done` may be destroyed on its own thread once the loop is gone:
// by then the round is finished and owns no loop object.
struct ProbeRound {
  std::vector<VolumeRecord> records;
  std::string boot_id;
  HealEvidence evidence;
  std::vector<bool> probing;  // per record: a read not yet settled
  size_t pending = 0;
  std::unique_ptr<Timer> deadline;
  std::function<void(std::vector<HealPlan>)> done;

  void Settle(size_t i, DeviceIo io) {
    if (!done || !probing[i]) return;
    probing[i] = false;
    evidence.views[i].io = io;
    evidence.plans[i] = PlanHeal(records[i], boot_id, evidence.views[i], evidence.processes, evidence.identity);
    if (--pending == 0) Finish();
  }

  void Finish() {
    deadline.reset();
    auto finished = std::move(done);
    done = nullptr;
    finished(std::move(evidence.plans));
  }
};

}  // namespace

DeviceIo ReadDeviceIo(const std::string& device) {
  int fd = ::open(device.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) return DeviceIo::kFailsAtOnce;
  void* buf = nullptr;
  DeviceIo io = DeviceIo::kFailsAtOnce;
  if (posix_memalign(&buf, kProbeBytes, kProbeBytes) == 0) {
    io = ::pread(fd, buf, kProbeBytes, 0) == static_cast<ssize_t>(kProbeBytes) ? DeviceIo::kServes
                                                                               : DeviceIo::kFailsAtOnce;
    free(buf);
  }
  ::close(fd);
  return io;
}

Result<NbdDeviceView> ReadNbdDeviceView(const std::string& device, const std::string& sysfs_root) {
  auto index = NbdDeviceIndex(device);
  if (!index.ok()) return index.status();
  auto cookie = ReadNbdBackendCookie(*index, sysfs_root);
  if (!cookie.ok() && cookie.status().code() == Code::kNotFound) return NbdDeviceView{};
  if (!cookie.ok()) return cookie.status();
  auto pid = ReadNbdPid(*index, sysfs_root);
  return NbdDeviceView{true, *cookie, pid.ok() ? *pid : 0, DeviceIo::kNotProbed};
}

Result<std::string> ResolveExecutable(const std::string& path) {
  std::string found = path;
  if (path.find('/') == std::string::npos) {
    const char* env = std::getenv("PATH");
    std::istringstream dirs(env ? env : "/usr/bin:/bin");
    found.clear();
    for (std::string dir; found.empty() && std::getline(dirs, dir, ':');) {
      std::string candidate = (dir.empty() ? "." : dir) + "/" + path;
      if (::access(candidate.c_str(), X_OK) == 0) found = candidate;
    }
    if (found.empty()) return Status::NotFound(path + ": not found in PATH");
  }
  std::unique_ptr<char, decltype(&std::free)> real(::realpath(found.c_str(), nullptr), &std::free);
  if (!real) return Status::FromErrno(errno, "resolve " + found);
  return std::string(real.get());
}

HealEvidence GatherHealEvidence(const std::vector<VolumeRecord>& records, const std::string& boot_id,
                                const HealEvidenceOptions& options) {
  auto processes = ScanRbdNbdProcesses(options.proc_root);
  auto exe = ResolveExecutable(options.rbd_nbd_path);
  if (!exe.ok()) NBDK_LOG_WARN("rbd_nbd_unresolved", {{"error", exe.status().message()}});
  HealEvidence evidence;
  // Unresolved: no /proc exe link can equal "", so nothing is adopted.
  evidence.identity = {exe.ok() ? *exe : "", options.server_uid};
  if (processes.ok()) evidence.processes = std::move(*processes);
  std::vector<HealPlan>& plans = evidence.plans;
  std::vector<NbdDeviceView>& views = evidence.views;
  plans.resize(records.size());
  views.resize(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const VolumeRecord& r = records[i];
    if (!processes.ok()) {
      plans[i] = {HealAction::kSkip, 0, "cannot scan processes: " + processes.status().message()};
      continue;
    }
    if (r.state == VolumeState::kStaged && r.boot_id == boot_id) {
      auto view = ReadNbdDeviceView(r.nbd_device, options.sysfs_root);
      if (!view.ok()) {
        plans[i] = {HealAction::kSkip, 0,
                    "cannot read the kernel's view of " + r.nbd_device + ": " + view.status().message()};
        continue;
      }
      views[i] = *view;
    }
    plans[i] = PlanHeal(r, boot_id, views[i], evidence.processes, evidence.identity);
  }
  return evidence;
}

void ProbeReattaches(EventLoop& loop, std::vector<VolumeRecord> records, std::string boot_id, HealEvidence evidence,
                     int wait_ms, std::function<void(std::vector<HealPlan>)> done) {
  NBDK_CHECK_LOOP_THREAD(loop);
  auto round = std::make_shared<ProbeRound>();
  round->records = std::move(records);
  round->boot_id = std::move(boot_id);
  round->evidence = std::move(evidence);
  round->done = std::move(done);
  round->probing.resize(round->records.size());
  // Every `done` below runs later, from the loop: none can finish the
  // round before all probes started.
  for (size_t i = 0; i < round->records.size(); ++i) {
    if (round->evidence.plans[i].action != HealAction::kReattach) continue;
    round->probing[i] = true;
    ++round->pending;
    auto io = std::make_shared<DeviceIo>(DeviceIo::kFailsAtOnce);
    loop.RunDetached([io, device = round->records[i].nbd_device] { *io = ReadDeviceIo(device); },
                     [round, i, io] { round->Settle(i, *io); });
  }
  if (round->pending == 0) return round->Finish();
  round->deadline = std::make_unique<Timer>(loop);
  round->deadline->Start(static_cast<uint64_t>(wait_ms), 0, [round] {
    for (size_t i = 0; i < round->records.size() && round->done; ++i) round->Settle(i, DeviceIo::kWaits);
  });
}

}  // namespace nbdk
