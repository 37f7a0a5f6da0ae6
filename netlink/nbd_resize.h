// Resizing a connected nbd device through generic netlink (RECONFIGURE with
// the new size), for devices whose server does not manage it itself.
//
// Why nbdkeeper does this: rbd-nbd notices an image resize through the image
// header's watch and sends NBD_CMD_RECONFIGURE itself, but before Ceph's
// fix (every pacific, Debian 12's 16.2.15 too) without
// NBD_ATTR_BACKEND_IDENTIFIER. rbd-nbd always connects with one (its
// --cookie, a random UUID when none is given), and drivers/block/nbd.c's nbd_genl_reconfigure (Debian's 6.1
// among them) refuses a device that has one unless the request names it:
// dmesg "block nbdX: must specify backend", EINVAL, and the device keeps
// its old size (Ceph tracker 64139; ceph/ceph#55287, backported to reef and
// quincy in 2024, not to pacific). The ioctl path is closed too: nbd_ioctl
// answers EINVAL to all but DISCONNECT and CLEAR_SOCK on a device configured
// through netlink. With the identifier, nbd_genl_size_set -> nbd_set_size
// grows a live, mounted device at once (set_capacity_and_notify).
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace nbdk {

// BLOCKING (run it in EventLoop::RunBlocking): the kernel runs the request
// in the caller's send, under the device's config lock. Opens its own
// netlink socket, so it is safe on any thread. Sets /dev/nbd<index> to
// `size_bytes`; `backend` is the device's backend identifier
// (ReadNbdBackendCookie), empty for a device connected without one. The
// kernel's refusal (a wrong identifier, a device not connected) comes back
// as its errno, the message naming the device and size.
Status ResizeNbdDevice(int index, uint64_t size_bytes, const std::string& backend);

// BLOCKING. The size of a block device (BLKGETSIZE64); the error names it.
Result<uint64_t> BlockDeviceBytes(const std::string& device);

// A device's size before and after GrowNbdDevice (equal when it was not
// smaller than asked).
struct NbdGrowth {
  uint64_t before = 0;
  uint64_t after = 0;
};

// BLOCKING. Grows the connected nbd `device` ("/dev/nbdN") to `size_bytes`
// when it is smaller, never shrinks it. The backend identifier sent is the
// one the kernel holds (read from sysfs under `sysfs_root`, not taken from
// a journal); the kernel's refusal comes back as in ResizeNbdDevice.
Result<NbdGrowth> GrowNbdDevice(const std::string& device, uint64_t size_bytes, const std::string& sysfs_root);

}  // namespace nbdk
