// A volume (or snapshot) found by its ID: the one lookup every Controller
// operation starts from, below them all (create, delete, expand, the
// snapshots and the content sources of a clone or restore).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "ceph/omap_volume_keys.h"
#include "ceph/rados_cluster.h"
#include "csi/controller/controller_request.h"
#include "csi/controller/omap_volume_journal.h"

namespace nbdk {

// A volume named by its ID: the image pool and its journal attributes.
struct FoundVolume {
  std::optional<IoCtx> image_pool;             // nullopt: the pool is gone
  std::optional<VolumeAttributes> attributes;  // nullopt: no journal entry
};

// BLOCKING. Opens the volume's pool and reads csi.volume.<uuid> (or, with
// kSnapshotJournalNames, csi.snap.<uuid>); a missing pool or object is a
// FoundVolume with nullopt, not an error.
Result<FoundVolume> FindVolume(const std::shared_ptr<RadosCluster>& cluster, const VolumeRef& volume,
                               const std::string& rados_namespace, const JournalNames& names = kVolumeJournalNames);

}  // namespace nbdk
