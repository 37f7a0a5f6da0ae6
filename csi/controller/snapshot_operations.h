// The Controller service's snapshot work on the cluster, one BLOCKING
// function per RPC (as csi/controller/controller_operations.h), in ceph-csi's RBD
// layout (docs/design/controller-layout.md):
//
// CreateSnapshot: snapshot journal Lookup (a name taken by another source
// is AlreadyExists) or Reserve (csi.snap.<uuid>: csi.snapname,
// csi.imagename = csi-snap-<uuid>, csi.source = the source's image name),
// then source@csi-snap-<uuid> -> clone csi-snap-<uuid> (layering,
// deep-flatten) -> remove source@csi-snap-<uuid> -> (an encrypted source)
// its encryption copied, the key re-wrapped under the snapshot ID
// (csi/controller/volume_encryption.h) -> snapshot
// csi-snap-<uuid>@csi-snap-<uuid>, flattened at kHardMaxCloneDepth
// (SnapshotImageSteps). An encrypted source's KMS ID and type are recorded
// in the snapshot's journal entry, as ceph-csi does. Every step is
// idempotent: a retry after a crash finishes the snapshot; a failure (not a
// crash) undoes it.
//
// DeleteSnapshot: the reverse - the RBD snapshot, the image (to the RBD
// trash while volumes restored from it still need it), the journal.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "ceph/rados_cluster.h"
#include "csi/controller/controller_request.h"
#include "csi/controller/rbd_steps.h"
#include "csi/controller/snapshot_request.h"
#include "csi/controller/volume_encryption.h"

namespace nbdk {

struct SnapshotInfo {
  std::string snapshot_id;       // encoded like a volume ID
  std::string source_volume_id;  // "" when the source is not a journaled volume
  int64_t size_bytes = 0;
  int64_t created_s = 0;
  int32_t created_ns = 0;
};

// The RBD steps after the reservation (csi/controller/rbd_steps.h): snapshot
// source@snap, clone `snap` from it, remove source@snap, `encryption`
// (CopyEncryptionSteps, or none), snapshot snap@snap, flatten `snap` at
// kHardMaxCloneDepth; `snap` is csi-snap-<uuid>, `source` the source
// volume's image, both in `io`, which must outlive the steps.
std::vector<RbdStep> SnapshotImageSteps(const std::shared_ptr<RadosCluster>& cluster, IoCtx& io,
                                        const std::string& source, const std::string& snap,
                                        const std::vector<RbdStep>& encryption);

// The encryption steps CreateSnapshot puts in SnapshotImageSteps: none for
// an unencrypted source (`source_kms` nullopt), else CopyEncryptionSteps
// from the source volume's `source_image` to `snap` (ID `snapshot_id`),
// the snapshot keeping the source's KMS as in ceph-csi. `io` and `params`
// (the secret) outlive the steps.
std::vector<RbdStep> SnapshotEncryptionSteps(IoCtx& io, const CreateSnapshotParams& params,
                                             const std::string& source_image, const std::string& snap,
                                             const std::string& snapshot_id,
                                             const std::optional<KmsSettings>& source_kms);

// NotFound when the source volume does not exist; InvalidArgument when its
// image lacks the layering feature (ceph-csi's answer), when its recorded
// KMS is not served (`resolve_kms`, encryption/kms_config.h), or when it is
// of type metadata and the secrets lack encryptionPassphrase; AlreadyExists
// when the name is a snapshot of another volume.
Result<SnapshotInfo> CreateSnapshotBlocking(const std::shared_ptr<RadosCluster>& cluster,
                                            const CreateSnapshotParams& params, const std::string& rados_namespace,
                                            const KmsResolver& resolve_kms);

// OK when the snapshot does not exist (or no longer does).
Status DeleteSnapshotBlocking(const std::shared_ptr<RadosCluster>& cluster, const VolumeRef& snapshot,
                              const std::string& rados_namespace);

// The snapshots of one cluster that `params`' filters select, sorted by
// snapshot ID (paging is the caller's). Without filters every pool's
// snapshot journal is read. Snapshots whose image is missing (half made or
// half deleted) are left out.
Result<std::vector<SnapshotInfo>> ListSnapshotsBlocking(const std::shared_ptr<RadosCluster>& cluster,
                                                        const std::string& cluster_id,
                                                        const ListSnapshotsParams& params,
                                                        const std::string& rados_namespace);

}  // namespace nbdk
