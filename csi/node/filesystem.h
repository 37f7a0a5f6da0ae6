// Filesystem work for the Node service: probe, mkfs, mount, unmount, grow.
//
// Every operation but the probe is an external command built as an argv
// vector and run through RunCommand on the loop (never a shell, never
// blocking); the probe is libblkid on a pool thread (device_probe.cc says
// why). `done` runs once, on the loop thread. Failures carry the command's
// own stderr. Loop thread only.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/command.h"
#include "base/event_loop.h"
#include "base/status.h"

namespace nbdk {

using StatusCallback = std::function<void(Status)>;

// What libblkid's low-level probe finds on a device. A device is blank only
// when it was read and the probe found nothing at all: a filesystem, a
// partition table, LVM, LUKS or any other signature means it holds data that
// mkfs would destroy (the rule Kubernetes' mount-utils follows), and a
// device that could not be read is an error, never blank.
struct DeviceSignature {
  std::string type;             // TYPE: "ext4", "xfs", "LVM2_member", ...; "" when none
  std::string partition_table;  // PTTYPE: "dos", "gpt"; "" when none
  bool blank() const { return type.empty() && partition_table.empty(); }
  // "an ext4 filesystem", "a dos partition table".
  std::string Describe() const;
};

// BLOCKING. Probes `device` (a block device, or a file in tests): its first
// and last MiB are read, then libblkid's safe probe runs on it. Nothing
// found is the one blank answer. A read that fails or ends early, a device
// of size 0 (an nbd device without a connection), an ambivalent probe
// (several signatures) and a failed probe are errors naming the device.
Result<DeviceSignature> ProbeDeviceSignature(const std::string& device);
// ProbeDeviceSignature on a pool thread.
void ProbeDevice(EventLoop& loop, const std::string& device, std::function<void(Result<DeviceSignature>)> done);

// mkfs.<fs_type> -q <options> <device>; `options` are csi/mkfs_options.h's
// (ceph-csi's defaults or the checked mkfsOptions). Only ext4 and xfs are
// accepted: empty for another type.
std::vector<std::string> MkfsArgv(const std::string& fs_type, const std::vector<std::string>& options,
                                  const std::string& device);
void MakeFilesystem(EventLoop& loop, const std::string& fs_type, const std::vector<std::string>& options,
                    const std::string& device, StatusCallback done);

// Every mount and bind mount made here carries _netdev (a userspace option:
// libmount keeps it in /run/mount/utab, the kernel never sees it), so that
// systemd orders the mount units it derives from them like any network
// filesystem's: after the network at boot, unmounted before the network
// goes at shutdown.
inline constexpr char kNetworkDeviceOption[] = "_netdev";

// mount -t <fs_type> -o <opts>,_netdev <device> <target>. xfs gets nouuid
// (clones and snapshots share UUIDs).
std::vector<std::string> MountArgv(const std::string& fs_type, const std::string& device, const std::string& target,
                                   std::vector<std::string> options);
void Mount(EventLoop& loop, const std::string& fs_type, const std::string& device, const std::string& target,
           std::vector<std::string> options, StatusCallback done);
// Bind-mounts source onto target, then remounts read-only when asked (a
// bind mount ignores "ro" on its first mount).
void BindMount(EventLoop& loop, const std::string& source, const std::string& target, bool read_only,
               std::vector<std::string> options, StatusCallback done);
// umount <target>; "not mounted" is success.
void Unmount(EventLoop& loop, const std::string& target, StatusCallback done);
// resize2fs <device> for ext4, xfs_growfs <mount point> for xfs.
void GrowFilesystem(EventLoop& loop, const std::string& fs_type, const std::string& device,
                    const std::string& mount_point, StatusCallback done);

// BLOCKING (call in RunBlocking). Creates a mount point: a directory (0750)
// for a filesystem, an empty file (0600) for a block bind mount. An existing
// one is fine.
Status CreateMountPoint(const std::string& path, bool block);
// BLOCKING. Removes a mount point (file or empty directory); absent is fine.
Status RemoveMountPoint(const std::string& path);

}  // namespace nbdk
