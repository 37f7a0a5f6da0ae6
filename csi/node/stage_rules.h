// The rules a NodeStageVolume checks before it changes anything
// (csi/node/stage_transaction.h). Pure; loop thread only (they read the table).
#pragma once

#include <string>

#include "csi/node/image_resolver.h"
#include "csi/node/node_request.h"
#include "csi/node/staged_volumes.h"

namespace nbdk {

// A volume staged in this boot may be staged again only at the same path
// with the same capability, of the same image (as far as the request names
// it) and snapshot (idempotent, OK); otherwise ALREADY_EXISTS, as the CSI
// spec asks.
Status CheckRestage(const VolumeRecord& staged, const StageRequest& request);

// One mapping per image per node: two volume IDs naming one image would
// map it read-write twice, and a lock break for one could fence the other.
// A snapshot of it is another thing to map: no writer, no lock
// (supervisor/image_fence.h), so it is staged beside the image, once.
// Two cluster IDs may name one cluster: a shared monitor counts as same.
// FailedPrecondition naming the volume that has the image (or snapshot)
// staged.
Status CheckImageNotStaged(const StagedVolumes& volumes, const std::string& volume_id, const ResolvedImage& resolved);

}  // namespace nbdk
