// Who still uses an nbd device: mounts (of its filesystem, or bind mounts of
// the device node itself) and holders (device-mapper, md). Unstage refuses
// to unmap a device someone still uses: rbd-nbd unmap under a live mount
// turns every later IO on it into an error.
#pragma once

#include <string>
#include <vector>

#include "csi/node/mount_table.h"
#include "base/status.h"

namespace nbdk {

// Mount points in `table` backed by `device` ("/dev/nbd3"): its filesystem
// (source == device) or the device node bind-mounted (devtmpfs, root
// "/nbd3"). Pure.
std::vector<std::string> MountsOfDevice(const std::vector<MountEntry>& table, const std::string& device);

// BLOCKING. FailedPrecondition naming the mounts or holders of `device`,
// read from `mountinfo_path` and sysfs (netlink/nbd_sysfs.h).
Status CheckDeviceUnused(const std::string& device, const std::string& mountinfo_path,
                         const std::string& sysfs_root);

}  // namespace nbdk
