// Validation of the CSI Controller requests: each Parse* checks a request
// against the CSI v1 spec and ceph-csi's StorageClass parameters and returns
// a parsed struct, so handlers never read raw request fields. Pure.
//
// Errors are InvalidArgument naming the field ("parameters.pool: missing").
// Secrets: userID and userKey (ceph-csi's provisioner secret) are required,
// by the rules of ceph/cephx_credentials.h; encryptionPassphrase is read
// when given (an encrypted CreateVolume requires it). Neither secret ever
// appears in a message.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "csi/controller/topology_pools.h"
#include "csi/controller/volume_parameters.h"
#include "csi/proto/csi.pb.h"
#include "csi/volume_capability.h"
#include "encryption/volume_passphrase.h"
#include "journal/volume_id.h"

namespace nbdk {

inline constexpr int64_t kDefaultVolumeBytes = int64_t{1} << 30;  // ceph-csi's default: 1 GiB
inline constexpr int64_t kMiB = int64_t{1} << 20;

struct ControllerSecrets {
  std::string user_id;   // cephx user, without "client."
  std::string user_key;  // SECRET: only into a key file; never log or print it
  // SECRET: only into the key wrap (csi/controller/volume_encryption.h);
  // empty when not given. Wiped when the request's work is done.
  SecretBytes encryption_passphrase;
};

// CreateVolume. Every parameter is honoured or refused by name
// (csi/controller/volume_parameters.h keeps the list); a name not below is
// InvalidArgument, except the csi.storage.k8s.io/ family. Honoured:
//  - clusterID, pool: required (pool not with topologyConstrainedPools);
//    journalPool, radosNamespace: optional names;
//  - topologyConstrainedPools (csi/controller/topology_pools.h): with accessibility
//    requirements, the pool (and dataPool) of the first preferred, then
//    requisite, topology a listed pool matches; that pool is the journal
//    pool too, and the topology the volume's accessible_topology, as
//    ceph-csi has them. A restore stays in its snapshot's pool, which must
//    match (CreateVolumeBlocking chooses then). Without requirements the
//    parameter is checked and pool is used;
//  - dataPool: the pool of the image's data objects (an erasure-coded pool,
//    say); the image pool keeps its header and the journal. It is returned
//    in the volume context, as ceph-csi does; ceph-csi's journal does not
//    record it, so neither does nbdkeeper's;
//  - imageFeatures: comma list of layering, exclusive-lock, object-map,
//    fast-diff, deep-flatten, journaling (default kDefaultImageFeatures),
//    with librbd's dependencies;
//  - objectSize, stripeUnit, stripeCount: the image's object size and
//    striping, in bytes (ParseImageLayout says which values librbd takes).
//    dataPool and these three lay out a restore or clone too, as ceph-csi
//    clones with them; without dataPool, a restore or clone keeps its
//    source's data pool (ceph/rbd_clone.h CloneImage);
//  - volumeNamePrefix: the image is <prefix><uuid> instead of csi-vol-<uuid>;
//  - mounter: "rbd-nbd" or absent (this plugin maps with rbd-nbd only);
//  - mapOptions, unmapOptions: ceph-csi's "krbd:...;nbd:..." form, checked
//    as the node will (csi/map_options.h) and passed to it in the volume
//    context;
//  - mkfsOptions: the node's mkfs options in place of ceph-csi's defaults
//    (csi/mkfs_options.h), checked for each mount capability's fs_type and
//    passed in the volume context;
//  - encrypted (a Go boolean), encryptionType, encryptionKMSID: a LUKS2
//    volume in ceph-csi's format (ParseEncryptionKmsId says what each
//    takes; csi/controller/volume_encryption.h what CreateVolume makes of
//    it), which needs the secret encryptionPassphrase;
//  - thickProvision, tryOtherMounters: only false (Go booleans);
//  - ceph-csi's rbd-nbd QoS parameters (baseIops, maxReadBps, ...,
//    baseVolSizeBytes): librbd's per-image QoS limits, written as ceph-csi
//    writes them (csi/controller/volume_qos.h), computed again when the
//    volume grows; a restore or clone also keeps its source's (librbd
//    copies the image metadata) where the request sets none;
//  - csi.storage.k8s.io/pvc/name, .../pvc/namespace, .../pv/name (the
//    provisioner's --extra-create-metadata): written as image metadata under
//    the same keys, as ceph-csi does (unless the daemon's --setmetadata is
//    false); the rest of the family (the secrets' names, fstype) is the
//    provisioner's and not read here;
//  - nbdkeeper.io/imageName: nbdkeeper's own, the image's exact name (not
//    with volumeNamePrefix).
// Refused as not supported, whatever their value: cephLogDir, cephLogStrategy (the node keeps rbd-nbd's logs
// itself) and snapshotNamePrefix (a VolumeSnapshotClass's).
// A repeated CreateVolume gets the name's reserved image whatever its
// parameters now say (csi/controller/volume_claim.h), as ceph-csi does.
// Size: required_bytes, else limit_bytes, else 1 GiB; rounded up to MiB,
// and the rounded size must not exceed limit_bytes.
//
// volume_content_source: a snapshot or a volume ID; an empty ID is
// InvalidArgument, one that does not decode NotFound (no such source).
struct ContentSource {
  enum class Kind { kNone, kSnapshot, kVolume };
  Kind kind = Kind::kNone;
  std::string id;  // the snapshot or volume ID as given
  VolumeId decoded;
};

struct CreateVolumeParams {
  std::string name;
  int64_t size_bytes = 0;
  std::vector<VolumeCapabilitySpec> capabilities;
  std::string cluster_id;
  std::string pool;
  std::string journal_pool;                         // "" : the image pool
  std::string rados_namespace;                      // "" : the cluster config's
  ImageCreateOptions image_options;                 // imageFeatures, dataPool, objectSize, stripeUnit, stripeCount
  std::string map_options;                          // passed through to the volume context
  std::string unmap_options;                        // the same
  std::string mkfs_options;                         // the same
  std::string image_name;                           // "nbdkeeper.io/imageName"; "": <name_prefix><uuid>
  std::string name_prefix;                          // volumeNamePrefix; "": csi-vol-
  std::map<std::string, std::string> metadata;      // VolumeMetadataOf: the image's metadata
  std::map<std::string, std::string> qos_metadata;  // QosImageMetadata: its QoS limits, whatever --setmetadata says
  std::optional<std::string> encryption_kms_id;     // nullopt: not encrypted; "default": the built-in KMS
  // topologyConstrainedPools with accessibility requirements; the choice is
  // made (pool, journal_pool, data_pool and accessible_topology set) except
  // for a restore, whose pool is its snapshot's (ApplyTopologyChoice).
  std::vector<TopologyConstrainedPool> topology_pools;
  csi::v1::TopologyRequirement accessibility;
  std::optional<TopologySegments> accessible_topology;
  ContentSource source;
  ControllerSecrets secrets;
};
Result<CreateVolumeParams> ParseCreateVolumeRequest(const csi::v1::CreateVolumeRequest& request);

// Chooses the pool of `params.topology_pools` for its accessibility
// requirements (only `only_pool` when not empty: a restore's snapshot pool)
// and sets pool, journal_pool, the data pool and accessible_topology.
// OK and nothing changed without topology pools.
Status ApplyTopologyChoice(CreateVolumeParams& params, std::string_view only_pool = "");

// The volume size for `range` (nullptr: none given), as described above.
Result<int64_t> VolumeSizeBytes(const csi::v1::CapacityRange* range);

// The request's decoded volume ID, for Delete, Expand and Validate. A
// volume ID that does not decode names no volume: NotFound.
struct VolumeRef {
  std::string volume_id;
  VolumeId decoded;
  ControllerSecrets secrets;
};

// nullopt when volume_id is present but does not decode: no volume of this
// driver has that ID, and the spec says deleting a volume that does not
// exist succeeds.
Result<std::optional<VolumeRef>> ParseDeleteVolumeRequest(const csi::v1::DeleteVolumeRequest& request);

struct ControllerExpandParams {
  VolumeRef volume;
  int64_t size_bytes = 0;               // rounded up to MiB
  bool node_expansion_required = true;  // false for a block capability (unless the volume is encrypted)
};
Result<ControllerExpandParams> ParseControllerExpandRequest(const csi::v1::ControllerExpandVolumeRequest& request);

struct ValidateParams {
  VolumeRef volume;
  // OK when every capability is one nbdkeeper serves; otherwise why not.
  Status capabilities;
};
Result<ValidateParams> ParseValidateRequest(const csi::v1::ValidateVolumeCapabilitiesRequest& request);

// The request's secrets: userID and userKey, both required
// (ceph/cephx_credentials.h), the key without surrounding whitespace; and
// encryptionPassphrase, byte for byte, when given.
Result<ControllerSecrets> ParseControllerSecrets(const google::protobuf::Map<std::string, std::string>& secrets);

// A CO request name (CreateVolume, CreateSnapshot): non-empty, at most 253
// bytes, no whitespace or control character; `field` names it in errors.
Status CheckRequestName(const char* field, const std::string& name);

// The volume context CreateVolume returns (ceph-csi's keys). An encrypted
// volume's says so as ceph-csi's Node reads it: encrypted "true",
// encryptionType "block", encryptionKMSID its KMS ID.
std::map<std::string, std::string> VolumeContextFor(const CreateVolumeParams& params, const std::string& image_name);

}  // namespace nbdk
