// The Controller service's work on the cluster, one BLOCKING function per
// RPC (run it in EventLoop::RunBlocking on Lane::kController with a
// connection from the Controller's RadosClients). Loop state is never
// touched here; the service serializes calls per request name / volume ID.
//
// Create: the name's claim (csi/controller/volume_claim.h: its reservation, or a new
// one when no image the creation makes exists), then the image (in
// ceph-csi's order, as docs/design/controller-layout.md says), empty or from
// a content source (csi/controller/clone_operations.h), encrypted as asked
// (csi/controller/volume_encryption.h), then its metadata (the PVC/PV
// names). Delete: the reverse - the
// image and its temporary clone (to the RBD trash while snapshots or clones
// depend on them), a temporary snapshot a crash left on a clone's source
// (csi.source), then the per-volume object, then the directory key - and
// nothing at all while the image has a watcher (it is mapped somewhere).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "ceph/rados_cluster.h"
#include "csi/controller/clone_operations.h"
#include "csi/controller/controller_request.h"
#include "csi/controller/volume_encryption.h"

namespace nbdk {

struct CreatedVolume {
  std::string volume_id;  // ceph-csi's format (journal/volume_id.h)
  int64_t size_bytes = 0;
  std::map<std::string, std::string> context;
};

// A restore's pool when the request has topology pools: its snapshot's,
// which must be in a requested topology (ApplyTopologyChoice). NotFound
// when the snapshot's pool is gone. OK, nothing changed, otherwise.
// BLOCKING (a pool lookup).
Status ChooseRestoreTopology(RadosCluster& cluster, CreateVolumeParams& params);

// `rados_namespace` is the effective one (parameter, else config.json's);
// `volume_kms` the KMS of the request's encryptionKMSID (nullopt: not
// encrypted; ResolveRequestedKms); `resolve_kms` reads the KMS config for
// the source's recorded one. AlreadyExists when the name's image exists
// with another size or another encryption, or when an image of the given
// nbdkeeper.io/imageName exists that this name's reservation does not name
// (nothing is changed then); NotFound when the content source does not
// exist; OutOfRange when it is larger than the requested size;
// PlanVolumeEncryption's errors before anything is reserved.
Result<CreatedVolume> CreateVolumeBlocking(const std::shared_ptr<RadosCluster>& cluster,
                                           const CreateVolumeParams& params, const std::string& rados_namespace,
                                           const std::optional<KmsSettings>& volume_kms,
                                           const KmsResolver& resolve_kms);

// The encryption steps CreateVolume puts in VolumeImageSteps for the new
// volume `image` (ID `volume_id`) in `io`: none when `plan` says it is not
// encrypted; PrepareEncryptionSteps for an empty volume; CopyEncryptionSteps
// from `source` for a clone or a restore. `io`, `source` and `params` (the
// secret) outlive the steps.
std::vector<RbdStep> VolumeEncryptionSteps(IoCtx& io, const std::string& image, const std::string& volume_id,
                                           const CreateVolumeParams& params, ResolvedSource& source,
                                           const VolumeEncryptionPlan& plan);

// OK when the volume does not exist (or no longer does). FailedPrecondition
// naming a watcher when the image is in use; nothing is deleted then.
Status DeleteVolumeBlocking(const std::shared_ptr<RadosCluster>& cluster, const VolumeRef& volume,
                            const std::string& rados_namespace);

struct ExpandedVolume {
  int64_t size_bytes = 0;  // the image's size afterwards
  bool encrypted = false;  // block-encrypted: the node grows its LUKS mapper, block volume or not
};

// Grows the image to at least `size_bytes`. NotFound when the volume does
// not exist.
Result<ExpandedVolume> ExpandVolumeBlocking(const std::shared_ptr<RadosCluster>& cluster, const VolumeRef& volume,
                                            int64_t size_bytes, const std::string& rados_namespace);

// OK when the volume's journal entry and image exist; NotFound otherwise.
Status CheckVolumeExistsBlocking(const std::shared_ptr<RadosCluster>& cluster, const VolumeRef& volume,
                                 const std::string& rados_namespace);

}  // namespace nbdk
