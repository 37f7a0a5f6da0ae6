// DeviceUsers: who still uses an nbd device - mounts (of its filesystem, or
// bind mounts of the device node itself), holders (device-mapper, md) and
// processes that have it open (a VM's qemu, dd on a block volume). The
// Node's unstage refuses to unmap a device someone still uses: rbd-nbd
// unmap under a live mount or opener turns every later IO on it, and the IO
// in flight, into an error. The CLI's forced unmap unmounts the mounts it
// did not make first (daemon/ctl/map_commands.h).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "host/mount_table.h"

namespace nbdk {

// Mount points in `table` backed by `device` ("/dev/nbd3"): its filesystem
// (source == device) or the device node bind-mounted (devtmpfs, root
// "/nbd3"). Pure.
std::vector<std::string> MountsOfDevice(const std::vector<MountEntry>& table, const std::string& device);

// BLOCKING. The processes with `device` open, from <proc_root>/<pid>/fd:
// "pid 812 (dd)". Left out: this process (its heal probe reads devices) and
// rbd-nbd (the device's own server, which the unmap ends). A process that
// exits meanwhile is skipped. An error only when `device` or `proc_root`
// cannot be read.
Result<std::vector<std::string>> DeviceOpeners(const std::string& device, const std::string& proc_root);

// BLOCKING. FailedPrecondition naming the mounts, holders or openers of
// `device`, read from `mountinfo_path`, sysfs (netlink/nbd_sysfs.h) and
// `proc_root`.
Status CheckDeviceUnused(const std::string& device, const std::string& mountinfo_path, const std::string& sysfs_root,
                         const std::string& proc_root);

}  // namespace nbdk
