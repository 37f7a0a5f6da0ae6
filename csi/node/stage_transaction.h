// StageVolume: NodeStageVolume as a stage transaction.
//
// Steps, in order, each with its undo:
//   key file (0600, tmpfs)          -> remove it
//   resolve the image (config.json, omap journal)
//   journal record, state "staging" -> remove the key file, then the record
//   stash image-meta.json           -> remove it
//   rbd-nbd map (Supervisor)        -> unmap
//   encrypted: the LUKS key, format when blank and prepared, open the
//   mapper (csi/node/luks_stage.h)  -> close the mapper
//   create the mount point <staging>/<volume id> -> remove it if created
//   filesystem: probe, mkfs only when blank, mount it there;
//   block: bind-mount the device onto it (the mapper, when encrypted)
//                                   -> unmount
//   journal record, state "staged" (device, pid)
// A failing step undoes every earlier one in reverse, so a failed stage
// leaves no mapping, mount, stash, key file or record behind, and returns
// the first error.
//
// An undo step that fails stops the undo there (unmapping under a mount
// that would not come off would turn its IO into errors); it is logged
// ("stage_undo_failed", with the volume and the step) and named in the
// error. Whatever is left stays journaled as "staging", and the record is
// written again to name it - the device still mapped, the mount point this
// stage made - so that NodeUnstageVolume or a retried stage can finish it,
// also after a daemon restart (the heal leaves "staging" records alone).
// Host-side steps go through node.host (NodeEnv).
//
// Idempotent per the CSI spec: staging a volume that is staged at the same
// path with a compatible capability is OK; with an incompatible one, or at
// another path, ALREADY_EXISTS. The caller holds the volume's op lock.
// Loop thread only.
#pragma once

#include <functional>

#include "csi/node/node_context.h"
#include "csi/node/node_request.h"

namespace nbdk {

void StageVolume(NodeContext& node, StageRequest request, VolumeOpLock lock, std::function<void(Status)> done);

}  // namespace nbdk
