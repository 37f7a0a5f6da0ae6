// Validation of the CSI Controller requests: each Parse* checks a request
// against the CSI v1 spec and ceph-csi's StorageClass parameters and returns
// a parsed struct, so handlers never read raw request fields. Pure.
//
// Errors are InvalidArgument naming the field ("parameters.pool: missing").
// Secrets: userID and userKey (ceph-csi's provisioner secret) are required,
// by the rules of ceph/cephx_credentials.h; the key never appears in a
// message.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "csi/proto/csi.pb.h"
#include "csi/volume_capability.h"
#include "base/status.h"
#include "journal/volume_id.h"

namespace nbdk {

inline constexpr char kDefaultImageFeatures[] = "layering,exclusive-lock,object-map,fast-diff";
inline constexpr int64_t kDefaultVolumeBytes = int64_t{1} << 30;  // ceph-csi's default: 1 GiB
inline constexpr int64_t kMiB = int64_t{1} << 20;

struct ControllerSecrets {
  std::string user_id;   // cephx user, without "client."
  std::string user_key;  // SECRET: only into a key file; never log or print it
};

// CreateVolume. Parameters (ceph-csi's; others are ignored):
//  - clusterID, pool: required; journalPool, radosNamespace: optional names;
//  - imageFeatures: comma list of layering, exclusive-lock, object-map,
//    fast-diff, deep-flatten, journaling (default kDefaultImageFeatures),
//    with librbd's dependencies (object-map needs exclusive-lock, fast-diff
//    needs object-map, journaling needs exclusive-lock);
//  - mounter: "rbd-nbd" or absent (this plugin maps with rbd-nbd only);
//  - mapOptions: ceph-csi's "krbd:...;nbd:..." form, checked as the node will;
//  - nbdkeeper.io/imageName: nbdkeeper's own, the image's exact name.
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
  std::string journal_pool;     // "" : the image pool
  std::string rados_namespace;  // "" : the cluster config's
  uint64_t features = 0;        // librbd RBD_FEATURE_* bits
  std::string map_options;      // passed through to the volume context
  std::string image_name;       // "nbdkeeper.io/imageName"; "": csi-vol-<uuid>
  ContentSource source;
  ControllerSecrets secrets;
};
Result<CreateVolumeParams> ParseCreateVolumeRequest(const csi::v1::CreateVolumeRequest& request);

// "layering,exclusive-lock" -> RBD_FEATURE_* bits; the field is named
// "parameters.imageFeatures" in errors. An empty list is no features.
Result<uint64_t> ParseImageFeatures(std::string_view csv);

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
  bool node_expansion_required = true;  // false only for a block capability
};
Result<ControllerExpandParams> ParseControllerExpandRequest(const csi::v1::ControllerExpandVolumeRequest& request);

struct ValidateParams {
  VolumeRef volume;
  // OK when every capability is one nbdkeeper serves; otherwise why not.
  Status capabilities;
};
Result<ValidateParams> ParseValidateRequest(const csi::v1::ValidateVolumeCapabilitiesRequest& request);

// The request's secrets: userID and userKey, both required
// (ceph/cephx_credentials.h); the key without surrounding whitespace.
Result<ControllerSecrets> ParseControllerSecrets(const google::protobuf::Map<std::string, std::string>& secrets);

// A CO request name (CreateVolume, CreateSnapshot): non-empty, at most 253
// bytes, no whitespace or control character; `field` names it in errors.
Status CheckRequestName(const char* field, const std::string& name);

// The volume context CreateVolume returns (ceph-csi's keys).
std::map<std::string, std::string> VolumeContextFor(const CreateVolumeParams& params,
                                                    const std::string& image_name);

}  // namespace nbdk
