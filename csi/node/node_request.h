// Validation of the CSI Node requests: each Parse* checks a request against
// the CSI v1 spec and ceph-csi's volume context, and returns a parsed struct
// so that handlers never read raw request fields again. Pure functions.
//
// Codes, as the spec asks:
//  - a missing or malformed field: InvalidArgument naming the field;
//  - a well-formed capability nbdkeeper cannot serve (access mode, fs type):
//    FailedPrecondition for stage and publish ("Exceeds capabilities"),
//    InvalidArgument for expand (its own error table says so);
//  - publish without staging_target_path: FailedPrecondition (the spec's
//    "Staging target path not set", since nbdkeeper has STAGE_UNSTAGE_VOLUME).
// Common rules:
//  - volume_id: ValidateVolumeId's rule (journal/volume_id.h);
//    ceph-csi IDs and image names meet it.
//  - paths: absolute, at most 4096 bytes, clean (no empty, "." or ".."
//    components, no trailing '/'), no control characters, not "/".
// Secrets (userKey) never appear in any error message.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "csi/proto/csi.pb.h"
#include "csi/volume_capability.h"
#include "encryption/volume_passphrase.h"
#include "journal/volume_id.h"

namespace nbdk {

// NodeStageVolume. Secrets: userID and userKey are required (ceph-csi's
// node-stage secret; ceph/cephx_credentials.h says what each may be).
// Volume context: a key not in csi/storage_class_keys.h's list (nor of the
// csi.storage.k8s.io/ family) is InvalidArgument naming it. Those read here:
//  - staticVolume: a Go boolean ("true", "1", "t", "false", ...). A static
//    volume's volume_id is its RBD image name and clusterID and pool are
//    required; otherwise volume_id must decode as a VolumeId.
//  - clusterID, pool, imageName, journalPool, radosNamespace: optional
//    names (no '/', '@' in imageName, no control characters); at least one
//    of imageName and clusterID must be present (ceph-csi's controller sets
//    both; neither means the volume did not come from it).
//  - imageSnapshot (nbdkeeper's own): a snapshot of the image, mapped
//    read-only in place of the image, a name by the same rule. Only with a
//    read-only capability (a *_READER_ONLY access mode), without encrypted
//    and without --exclusive in mapOptions: InvalidArgument naming it
//    otherwise. A static volume with it is the snapshot of imageName when
//    that is set (its volume_id then names the mapping only, so the image
//    and each of its snapshots can be staged side by side), else of the
//    image its volume_id names.
//  - mounter: "rbd-nbd", empty or absent; anything else (krbd's "rbd") is
//    InvalidArgument: this plugin maps with rbd-nbd only.
//  - mapOptions, unmapOptions: ceph-csi's "krbd:...;nbd:..." form; the nbd
//    part of mapOptions becomes allow-listed rbd-nbd arguments
//    (supervisor/rbd_nbd_options.h); unmapOptions is only kept for the stash.
//  - encrypted, encryptionType, encryptionKMSID: a LUKS2 volume in
//    ceph-csi's format (csi/encryption_options.h reads them, as the
//    Controller does); its secret encryptionPassphrase is then required.
//  - mkfsOptions: for a filesystem volume, the options of its first stage's
//    mkfs in place of ceph-csi's defaults, checked for the capability's
//    fs_type (csi/mkfs_options.h); not read for a block volume.

// An encrypted volume's KMS and the request's secret for it.
struct StageEncryption {
  std::string kms_id;  // "default" for an absent or empty encryptionKMSID
  // SECRET (the request's encryptionPassphrase): shared, never copied,
  // wiped with its last holder.
  std::shared_ptr<const SecretBytes> passphrase;
};

struct StageRequest {
  std::string volume_id;
  std::string staging_target_path;
  VolumeCapabilitySpec capability;
  std::string user_id;   // cephx user, without "client."
  std::string user_key;  // SECRET: goes only into the key file; never log or print it
  bool static_volume = false;
  // Dynamic volumes: the decoded volume_id. Static volumes: nullopt.
  std::optional<VolumeId> decoded_id;
  // From decoded_id for a dynamic volume (the volume context's clusterID is
  // ignored then, as ceph-csi does), from the volume context for a static one.
  std::string cluster_id;
  std::string pool;          // volume context; "" when absent (dynamic: resolve the pool ID)
  std::string image_name;    // static: volume_id (or imageName, see imageSnapshot); dynamic: imageName, or "" (look up
                             // the journal)
  std::string snapshot;      // imageSnapshot; "": the image itself
  std::string journal_pool;  // "" means the image pool
  std::string rados_namespace;                // "" means: take it from the cluster config
  std::vector<std::string> map_options;       // rbd-nbd arguments, e.g. "--try-netlink"
  std::string unmap_options_csv;              // the nbd unmapOptions text, for the stash
  std::vector<std::string> mkfs_options;      // a first stage's mkfs options (MkfsOptions); empty for block
  std::optional<StageEncryption> encryption;  // nullopt: not encrypted
};
Result<StageRequest> ParseStageRequest(const csi::v1::NodeStageVolumeRequest& request);

struct UnstageRequest {
  std::string volume_id;
  std::string staging_target_path;
};
Result<UnstageRequest> ParseUnstageRequest(const csi::v1::NodeUnstageVolumeRequest& request);

struct PublishRequest {
  std::string volume_id;
  std::string staging_target_path;
  std::string target_path;
  VolumeCapabilitySpec capability;
  bool read_only = false;  // the readonly flag, or a *_READER_ONLY access mode
};
Result<PublishRequest> ParsePublishRequest(const csi::v1::NodePublishVolumeRequest& request);

struct UnpublishRequest {
  std::string volume_id;
  std::string target_path;
};
Result<UnpublishRequest> ParseUnpublishRequest(const csi::v1::NodeUnpublishVolumeRequest& request);

struct VolumeStatsRequest {
  std::string volume_id;
  std::string volume_path;
  std::string staging_target_path;  // optional: "" when the CO sent none
};
Result<VolumeStatsRequest> ParseVolumeStatsRequest(const csi::v1::NodeGetVolumeStatsRequest& request);

struct ExpandRequest {
  std::string volume_id;
  std::string volume_path;
  std::string staging_target_path;                 // optional: "" when the CO sent none
  std::optional<VolumeCapabilitySpec> capability;  // optional in the spec
  int64_t required_bytes = 0;                      // 0: not set
  int64_t limit_bytes = 0;                         // 0: not set
};
Result<ExpandRequest> ParseExpandRequest(const csi::v1::NodeExpandVolumeRequest& request);

}  // namespace nbdk
