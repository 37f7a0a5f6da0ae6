// What a stage that did not finish leaves behind, released before a retry.
//
// A "staging" journal record means an earlier NodeStageVolume of the volume
// did not complete: the daemon crashed midway, or its undo stopped at a
// step that failed. A mapping and a mount of it may still exist. Mapping
// again would give the image a second device on this node, so the retry
// first unmounts the record's staging mount point and unmaps every device
// that carries the volume's cookie: through the supervisor when it serves
// the volume, else with `rbd-nbd unmap` of each device found in sysfs (an
// rbd-nbd left by a crashed daemon).
// Loop thread only.
#pragma once

#include <functional>

#include "csi/node/node_context.h"

namespace nbdk {

void ReleaseStageLeftovers(NodeContext& node, const VolumeRecord& record, std::function<void(Status)> done);

// The unmap half of ReleaseStageLeftovers, for an unstage of a "staging"
// record of this boot whose mount is already gone.
void UnmapStageLeftovers(NodeContext& node, const VolumeRecord& record, std::function<void(Status)> done);

}  // namespace nbdk
