// Growing a staged volume's nbd device to its RBD image's size, for
// NodeExpandVolume after ControllerExpandVolume grew the image.
//
// rbd-nbd 16 (pacific) cannot resize a netlink-configured device itself: its
// RECONFIGURE lacks the backend identifier the kernel demands (the evidence
// is in netlink/nbd_resize.h). So the node reads the image's size with
// librbd and has the supervisor, which owns the device, grow it
// (Supervisor::GrowDevice). A newer rbd-nbd that resizes the device itself
// leaves nothing to do here.
#pragma once

#include <cstdint>
#include <functional>

#include "base/status.h"
#include "csi/node/node_context.h"
#include "journal/volume_record.h"

namespace nbdk {

struct DeviceGrowth {
  uint64_t image_bytes = 0;
  uint64_t device_bytes = 0;  // after the growth
};

// Reads the size of `record`'s image with librbd as the volume's cephx user
// (its key file from staging), and when the image is larger than the nbd
// device, has the supervisor grow the device to it. Never shrinks a device.
// Loop thread only; blocking work runs off the loop and `done` is called
// on the loop thread. NotFound when the image is gone or the volume has no
// mapping; the kernel's refusal as its errno.
void GrowDeviceToImage(NodeContext& node, const VolumeRecord& record, std::function<void(Result<DeviceGrowth>)> done);

}  // namespace nbdk
