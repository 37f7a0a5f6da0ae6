// HealPlan: what to do with one journaled volume when nbdkeeperd starts -
// a pure decision over what the journal says and what the kernel and /proc
// show, so every case is unit-tested on a host without nbd.
//
// The evidence, and why each piece is trusted:
//  - the boot id: a record from another boot names a device and a pid that
//    no longer exist;
//  - /sys/block/nbdN/backend: the cookie the device was connected with
//    (rbd-nbd --cookie, the volume id); absent when it is not configured;
//  - live rbd-nbd processes from /proc/<pid>/cmdline: one serves our device
//    only if its argv carries `--cookie <record.cookie>` and the record's
//    image. The recorded pid alone is never trusted (pids are reused);
//  - and before one is adopted (watched, later signalled), its identity:
//    /proc/<pid>/exe is the configured rbd-nbd, it runs as the daemon's
//    uid (root in production; children inherit it, and anyone else's
//    process is not ours to signal), and it is the device's server:
//    a `map` must be the pid in /sys/block/nbdN/pid (the kernel records
//    the connecting process there, rbd-nbd connects from its main thread);
//    an `attach` never is - that file keeps the ORIGINAL map's pid after
//    a re-attach (netlink/nbd_sysfs.h) - so an attach must be the
//    journaled pid (the journal records each attach it spawns) and name
//    the record's device with --device. A process failing any of this is
//    neither adopted nor signalled; the plan's reason says why;
//  - a probe read of the device (only when nobody serves it): the kernel
//    fails IO at once only after the reattach window passed with IO
//    waiting, and then a re-attach would hide damage already done (ext4
//    aborts its journal on that EIO). A device that just waits is inside
//    the window, or was idle through it: a re-attach is safe either way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "host/process_scan.h"
#include "journal/volume_record.h"

namespace nbdk {

// What an rbd-nbd this daemon started looks like in /proc.
struct ServerIdentity {
  std::string exe;  // the configured rbd-nbd, an absolute path without links
  int64_t uid = 0;  // the daemon's own uid, which its children inherit
};

// What a probe read of the device showed.
enum class DeviceIo {
  kNotProbed,    // not needed (or not possible): treated as kWaits
  kWaits,        // the read did not complete quickly: the kernel waits for an attach
  kFailsAtOnce,  // EIO at once: the kernel's reattach window has passed
  kServes,       // the read completed: something we do not know serves the device
};

// The kernel's view of the record's device.
struct NbdDeviceView {
  bool configured = false;     // /sys/block/nbdN/backend exists
  std::string backend_cookie;  // its content when configured
  int pid = 0;                 // /sys/block/nbdN/pid; 0 when absent
  DeviceIo io = DeviceIo::kNotProbed;
};

enum class HealAction {
  kAdopt,          // a live rbd-nbd serves the device: watch it (pid)
  kReattach,       // same boot, device still ours, no server: attach it again
  kExpired,        // same boot, device lost or failing IO: report, never re-map
  kStaleBoot,      // the node rebooted: nothing to heal, the record stays for Unstage
  kSkip,           // not "staged" (a NodeStage or NodeUnstage cut short): kubelet retries it
  kUnknownServer,  // the device serves IO but no rbd-nbd of ours does: leave it alone
};

struct HealPlan {
  HealAction action = HealAction::kSkip;
  int pid = 0;         // kAdopt: the process to adopt
  std::string reason;  // one sentence for the log and /status
};

// "Adopt", "Reattach", ... (log and /status words).
std::string_view HealActionName(HealAction action);

// Whether `process` is an rbd-nbd map or attach for `record`: argv[0]'s
// basename is "rbd-nbd", its argv reads (ParseRbdNbdArgv,
// supervisor/rbd_nbd_argv.h) as a map or attach whose --cookie is
// record.cookie and whose image is the record's "pool/[ns/]image[@snap]":
// a server of the image's head never serves a snapshot's record, nor the
// reverse.
bool ServesRecord(const RbdNbdProcess& process, const VolumeRecord& record);

// Why `process`, which ServesRecord, must not be adopted (see the top of
// this file); empty when its identity holds.
std::string IdentityProblem(const RbdNbdProcess& process, const VolumeRecord& record, const NbdDeviceView& device,
                            const ServerIdentity& expected);

// The decision, in this order: not staged -> kSkip; other boot ->
// kStaleBoot; device not configured with record.cookie -> kExpired; a live
// rbd-nbd for the record whose identity holds (the recorded pid preferred
// when several) -> kAdopt; device.io kFailsAtOnce -> kExpired, kServes ->
// kUnknownServer; otherwise kReattach. Servers refused for their identity
// are named in the reason.
HealPlan PlanHeal(const VolumeRecord& record, std::string_view boot_id, const NbdDeviceView& device,
                  const std::vector<RbdNbdProcess>& processes, const ServerIdentity& expected);

}  // namespace nbdk
