// StageVolume: NodeStageVolume as a stage transaction.
//
// Steps, in order, each with its undo:
//   key file (0600, tmpfs)          -> remove it
//   resolve the image (config.json, omap journal)
//   journal record, state "staging" -> remove the record
//   stash image-meta.json           -> remove it
//   rbd-nbd map (Supervisor)        -> unmap
//   filesystem: probe, mkfs only when blank, mount at <staging>/<volume id>;
//   block: bind-mount the device onto the file <staging>/<volume id>
//                                   -> unmount, remove the mount point
//   journal record, state "staged" (device, pid)
// A failing step undoes every earlier one in reverse, so a failed stage
// leaves no mapping, mount, stash, key file or record behind, and returns
// the first error.
//
// Idempotent per the CSI spec: staging a volume that is staged at the same
// path with a compatible capability is OK; with an incompatible one, or at
// another path, ALREADY_EXISTS. The caller holds the volume's op lock.
// Loop thread only.
#pragma once

#include <functional>

#include "csi/node_context.h"
#include "csi/node_request.h"

namespace nbdk {

void StageVolume(NodeContext& node, StageRequest request, VolumeOpLock lock, std::function<void(Status)> done);

}  // namespace nbdk
