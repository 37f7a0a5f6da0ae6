// Filesystem work for the Node service: probe, mkfs, mount, unmount, grow.
//
// Every operation is an external command built as an argv vector and run
// through RunCommand on the loop (never a shell, never blocking). `done`
// runs once, on the loop thread. Failures carry the command's own stderr.
// Loop thread only.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "daemon/base/event_loop.h"
#include "daemon/base/status.h"

namespace nbdk {

using StatusCallback = std::function<void(Status)>;

// The filesystem type on `device` ("ext4", "xfs", ...), or "" when blkid
// finds none (a fresh device). Anything else blkid says is an error.
void ProbeFilesystem(EventLoop& loop, const std::string& device, std::function<void(Result<std::string>)> done);

// ceph-csi's options for fresh devices: ext4 -m0 -Enodiscard,lazy_itable_init=1,
// lazy_journal_init=1; xfs -K. Only ext4 and xfs are accepted.
std::vector<std::string> MkfsArgv(const std::string& fs_type, const std::string& device);
void MakeFilesystem(EventLoop& loop, const std::string& fs_type, const std::string& device, StatusCallback done);

// mount -t <fs_type> [-o opts] <device> <target>. xfs gets nouuid (clones
// and snapshots share UUIDs).
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
