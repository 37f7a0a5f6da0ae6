// HealEvidence: what the kernel and /proc say about journaled volumes, read
// for PlanHeal (csi/heal/heal_plan.h) when the daemon starts; the rbd-nbd
// servers come from the host's process scan (host/process_scan.h).
//
// Everything here BLOCKS (file reads, a probe read of a device) and runs
// off the loop - through EventLoop::RunBlocking, or RunDetached for the
// probe read - except ProbeReattaches, which runs on the loop.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "base/status.h"
#include "csi/heal/heal_plan.h"
#include "netlink/nbd_sysfs.h"

namespace nbdk {

struct HealEvidenceOptions {
  std::string proc_root = "/proc";
  std::string sysfs_root = kSysfsRoot;
  // The rbd-nbd the supervisor runs (a bare name is looked up in PATH, as
  // the spawn does) and the uid its children run as: a server is adopted
  // only if it matches both (csi/heal/heal_plan.h). The daemon's own uid:
  // root in production; an unprivileged test's children run as the test.
  std::string rbd_nbd_path = "rbd-nbd";
  int64_t server_uid = static_cast<int64_t>(::geteuid());
  // How long a probe read may take before the device counts as waiting
  // for an attach (a kernel past its reattach window fails it at once). A
  // device held for an attach holds the read however long the wait, so a
  // longer one only delays that re-attach; one too short re-attaches a
  // device past its window (500 ms did, under qemu TCG at a loaded daemon
  // start: heal_vm's case (c) on Linux 6.12).
  int probe_wait_ms = 2000;
};

// `path` as /proc/<pid>/exe would name it: absolute, symlinks resolved; a
// name without '/' is searched in $PATH. NotFound when nothing matches.
Result<std::string> ResolveExecutable(const std::string& path);

// The backend cookie and connecting pid of `device` ("/dev/nbdN"); not
// configured when sysfs has no backend file, pid 0 without a readable pid
// file. InvalidArgument for a device that is not /dev/nbdN.
Result<NbdDeviceView> ReadNbdDeviceView(const std::string& device, const std::string& sysfs_root);

// Reads 4 KiB at offset 0 with O_DIRECT: kServes on success, kFailsAtOnce
// on EIO or a device that cannot be opened (it cannot carry IO either).
// Blocks while the device waits for an attach: until the attach comes or
// the kernel's reattach window ends (run it through RunDetached).
DeviceIo ReadDeviceIo(const std::string& device);

// A plan per record and what it was made from.
struct HealEvidence {
  std::vector<HealPlan> plans;
  std::vector<NbdDeviceView> views;
  std::vector<RbdNbdProcess> processes;
  ServerIdentity identity;
};

// For each record (same order): PlanHeal over the kernel's view and the
// processes of one scan, reading no device: a plan that is kReattach
// still needs ProbeReattaches. A sysfs read error becomes a kSkip plan
// naming it.
HealEvidence GatherHealEvidence(const std::vector<VolumeRecord>& records, const std::string& boot_id,
                                const HealEvidenceOptions& options);

// Loop thread only. Probes the device of every kReattach plan at once
// (ReadDeviceIo through EventLoop::RunDetached) and plans it again with
// what the read showed within `wait_ms`: kWaits for a read still blocked
// then, which is left to finish on its own. `done` gets the plans.
void ProbeReattaches(EventLoop& loop, std::vector<VolumeRecord> records, std::string boot_id, HealEvidence evidence,
                     int wait_ms, std::function<void(std::vector<HealPlan>)> done);

}  // namespace nbdk
