#include "csi/node/node_request.h"

#include <cctype>

#include "base/quote_field.h"
#include "base/text_rules.h"
#include "ceph/image_spec.h"
#include "csi/encryption_options.h"
#include "csi/map_options.h"
#include "csi/mkfs_options.h"
#include "csi/request_secrets.h"
#include "csi/storage_class_keys.h"

namespace nbdk {
namespace {

constexpr size_t kMaxPathLength = 4096;

bool HasControlChar(std::string_view s) {
  for (char c : s) {
    if (std::iscntrl(static_cast<unsigned char>(c))) return true;
  }
  return false;
}

// An absolute, clean path: what filepath.Clean would leave unchanged.
Status CheckPath(const char* field, const std::string& path) {
  std::string f(field);
  if (path.empty()) return Status::InvalidArgument(f + ": missing");
  if (path.size() > kMaxPathLength) return Status::InvalidArgument(f + ": longer than 4096 bytes");
  if (HasControlChar(path)) return Status::InvalidArgument(f + ": contains a NUL or control character");
  std::string shown = f + ": " + QuoteField(path) + " ";
  if (path.front() != '/') return Status::InvalidArgument(shown + "is not an absolute path");
  if (path == "/") return Status::InvalidArgument(shown + "is the root directory");
  if (path.back() == '/') return Status::InvalidArgument(shown + "is not clean: trailing '/'");
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string_view part(path.data() + start, end - start);
    if (part.empty()) return Status::InvalidArgument(shown + "is not clean: empty component");
    if (part == "." || part == "..") {
      return Status::InvalidArgument(shown + "is not clean: contains a '" + std::string(part) + "' component");
    }
    start = end + 1;
  }
  return Status::Ok();
}

// Stats and expand look the volume up first (NOT_FOUND) and then accept only
// a path the journal records for it (NOT_FOUND otherwise), so the path's
// syntax never matters beyond this.
Status CheckVolumePathGiven(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("volume_path: missing");
  if (path.size() > kMaxPathLength) return Status::InvalidArgument("volume_path: longer than 4096 bytes");
  return Status::Ok();
}

// The node-stage secret (csi/request_secrets.h).
Status ParseSecrets(const google::protobuf::Map<std::string, std::string>& secrets, StageRequest* out) {
  auto secret = ParseCephxSecret(secrets);
  if (!secret.ok()) return secret.status();
  out->user_id = std::move(secret->user_id);
  out->user_key = std::move(secret->user_key);
  return Status::Ok();
}

Result<bool> ParseGoBool(const char* field, const std::string& v) {
  if (auto b = GoBool(v)) return *b;
  return Status::InvalidArgument(std::string("volume_context: ") + field + ": " + QuoteField(v) + " is not a boolean");
}

// A pool, namespace or image name (or the clusterID, which names files):
// Ceph's naming rule (ceph/image_spec.h).
Result<std::string> ContextName(const google::protobuf::Map<std::string, std::string>& ctx, const char* key) {
  auto it = ctx.find(key);
  if (it == ctx.end()) return std::string();
  NBDK_RETURN_IF_ERROR(CheckCephName(std::string("volume_context: ") + key, it->second, false));
  return it->second;
}

// The nbd part of mapOptions, as allow-listed rbd-nbd arguments (a
// snapshot's by their rule for one).
Status ParseMapOptionsContext(const google::protobuf::Map<std::string, std::string>& ctx, bool snapshot,
                              std::vector<std::string>* args) {
  auto it = ctx.find("mapOptions");
  if (it == ctx.end()) return Status::Ok();
  auto parsed = MapOptionArguments(it->second, snapshot);
  if (!parsed.ok()) return parsed.status().WithContext("volume_context: mapOptions");
  *args = std::move(parsed).value();
  return Status::Ok();
}

// The nbd part of unmapOptions (csi/map_options.h).
Status ParseUnmapOptionsContext(const google::protobuf::Map<std::string, std::string>& ctx, std::string* csv) {
  auto it = ctx.find("unmapOptions");
  if (it == ctx.end()) return Status::Ok();
  auto section = UnmapOptionsCsv(it->second);
  if (!section.ok()) return section.status().WithContext("volume_context: unmapOptions");
  *csv = std::move(section).value();
  return Status::Ok();
}

Status ParseVolumeContext(const google::protobuf::Map<std::string, std::string>& ctx, StageRequest* out) {
  NBDK_RETURN_IF_ERROR(CheckVolumeContextKeys(ctx));
  if (auto it = ctx.find("staticVolume"); it != ctx.end()) {
    auto is_static = ParseGoBool("staticVolume", it->second);
    if (!is_static.ok()) return is_static.status();
    out->static_volume = *is_static;
  }
  auto kms_id = ParseEncryptionKmsId(ctx, "volume_context: ");
  if (!kms_id.ok()) return kms_id.status();
  if (*kms_id) out->encryption = StageEncryption{std::move(**kms_id), nullptr};
  if (auto it = ctx.find("mounter"); it != ctx.end() && !it->second.empty() && it->second != "rbd-nbd") {
    return Status::InvalidArgument("volume_context: mounter: " + QuoteField(it->second) +
                                   " is not supported: nbdkeeper maps with rbd-nbd only");
  }
  auto non_empty = [&ctx](const char* key) {
    auto it = ctx.find(key);
    return it != ctx.end() && !it->second.empty();
  };
  if (!non_empty("imageName") && !non_empty("clusterID")) {
    return Status::InvalidArgument(
        "volume_context: neither imageName nor clusterID is set; the volume was not created by ceph-csi's RBD "
        "controller");
  }

  auto cluster_id = ContextName(ctx, "clusterID");
  auto pool = ContextName(ctx, "pool");
  auto image = ContextName(ctx, "imageName");
  auto journal_pool = ContextName(ctx, "journalPool");
  auto rados_namespace = ContextName(ctx, "radosNamespace");
  auto snapshot = ContextName(ctx, "imageSnapshot");
  for (const auto* r : {&cluster_id, &pool, &image, &journal_pool, &rados_namespace, &snapshot}) {
    if (!r->ok()) return r->status();
  }
  out->pool = *pool;
  out->image_name = *image;
  out->journal_pool = *journal_pool;
  out->rados_namespace = *rados_namespace;
  out->snapshot = *snapshot;

  if (out->static_volume) {
    if (cluster_id->empty()) return Status::InvalidArgument("volume_context: clusterID: required for a static volume");
    if (out->pool.empty()) return Status::InvalidArgument("volume_context: pool: required for a static volume");
    out->cluster_id = *cluster_id;
    // ceph-csi: a static volume's ID is its image name. A snapshot's may
    // name its image apart, so that the image is staged beside it.
    if (out->snapshot.empty() || out->image_name.empty()) out->image_name = out->volume_id;
  } else {
    auto decoded = DecodeVolumeId(out->volume_id);
    if (!decoded.ok()) return decoded.status();
    out->cluster_id = decoded->cluster_id;
    out->decoded_id = std::move(decoded).value();
  }

  NBDK_RETURN_IF_ERROR(ParseMapOptionsContext(ctx, !out->snapshot.empty(), &out->map_options));
  return ParseUnmapOptionsContext(ctx, &out->unmap_options_csv);
}

// A snapshot is mapped read-only (supervisor/rbd_nbd_argv.h), so only a
// read-only capability may ask for one, and not an encrypted volume's: its
// LUKS header would be opened (and formatted, when blank) read-write.
Status CheckSnapshotRequest(const StageRequest& r) {
  if (r.snapshot.empty()) return Status::Ok();
  const std::string field = "volume_context: imageSnapshot: ";
  if (!r.capability.read_only) {
    return Status::InvalidArgument(field + QuoteField(r.snapshot) +
                                   " is mapped read-only: the access mode must be *_READER_ONLY");
  }
  if (r.encryption) return Status::InvalidArgument(field + "not with encrypted: a snapshot's LUKS is not opened");
  return Status::Ok();
}

}  // namespace

Result<StageRequest> ParseStageRequest(const csi::v1::NodeStageVolumeRequest& request) {
  StageRequest out;
  NBDK_RETURN_IF_ERROR(ValidateVolumeId(request.volume_id()));
  out.volume_id = request.volume_id();
  NBDK_RETURN_IF_ERROR(CheckPath("staging_target_path", request.staging_target_path()));
  out.staging_target_path = request.staging_target_path();
  if (!request.has_volume_capability()) return Status::InvalidArgument("volume_capability: missing");
  auto cap = ParseVolumeCapability(request.volume_capability(), "volume_capability", Code::kFailedPrecondition);
  if (!cap.ok()) return cap.status();
  out.capability = std::move(cap).value();
  NBDK_RETURN_IF_ERROR(ParseSecrets(request.secrets(), &out));
  NBDK_RETURN_IF_ERROR(ParseVolumeContext(request.volume_context(), &out));
  NBDK_RETURN_IF_ERROR(CheckSnapshotRequest(out));
  if (out.encryption) {
    SecretBytes secret = ReadEncryptionPassphrase(request.secrets());
    if (secret.empty()) {
      return Status::InvalidArgument("secrets: encryptionPassphrase: required for an encrypted volume (KMS " +
                                     QuoteField(out.encryption->kms_id) + ")");
    }
    out.encryption->passphrase = std::make_shared<const SecretBytes>(std::move(secret));
  }
  if (!out.capability.block) {
    auto it = request.volume_context().find("mkfsOptions");
    auto mkfs = MkfsOptions(out.capability.fs_type, it == request.volume_context().end() ? "" : it->second);
    if (!mkfs.ok()) return mkfs.status().WithContext("volume_context");
    out.mkfs_options = std::move(mkfs).value();
  }
  return out;
}

Result<UnstageRequest> ParseUnstageRequest(const csi::v1::NodeUnstageVolumeRequest& request) {
  NBDK_RETURN_IF_ERROR(ValidateVolumeId(request.volume_id()));
  NBDK_RETURN_IF_ERROR(CheckPath("staging_target_path", request.staging_target_path()));
  return UnstageRequest{request.volume_id(), request.staging_target_path()};
}

Result<PublishRequest> ParsePublishRequest(const csi::v1::NodePublishVolumeRequest& request) {
  NBDK_RETURN_IF_ERROR(ValidateVolumeId(request.volume_id()));
  NBDK_RETURN_IF_ERROR(CheckPath("target_path", request.target_path()));
  // Before the staging path: a request without a capability is malformed
  // whatever else it lacks.
  if (!request.has_volume_capability()) return Status::InvalidArgument("volume_capability: missing");
  if (request.staging_target_path().empty()) {
    return Status::FailedPrecondition(
        "staging_target_path: missing; nbdkeeper stages volumes, so NodeStageVolume must succeed first");
  }
  NBDK_RETURN_IF_ERROR(CheckPath("staging_target_path", request.staging_target_path()));
  auto cap = ParseVolumeCapability(request.volume_capability(), "volume_capability", Code::kFailedPrecondition);
  if (!cap.ok()) return cap.status();
  PublishRequest out;
  out.volume_id = request.volume_id();
  out.staging_target_path = request.staging_target_path();
  out.target_path = request.target_path();
  out.read_only = request.readonly() || cap->read_only;
  out.capability = std::move(cap).value();
  return out;
}

Result<UnpublishRequest> ParseUnpublishRequest(const csi::v1::NodeUnpublishVolumeRequest& request) {
  NBDK_RETURN_IF_ERROR(ValidateVolumeId(request.volume_id()));
  NBDK_RETURN_IF_ERROR(CheckPath("target_path", request.target_path()));
  return UnpublishRequest{request.volume_id(), request.target_path()};
}

Result<VolumeStatsRequest> ParseVolumeStatsRequest(const csi::v1::NodeGetVolumeStatsRequest& request) {
  NBDK_RETURN_IF_ERROR(ValidateVolumeId(request.volume_id()));
  NBDK_RETURN_IF_ERROR(CheckVolumePathGiven(request.volume_path()));
  return VolumeStatsRequest{request.volume_id(), request.volume_path(), request.staging_target_path()};
}

Result<ExpandRequest> ParseExpandRequest(const csi::v1::NodeExpandVolumeRequest& request) {
  NBDK_RETURN_IF_ERROR(ValidateVolumeId(request.volume_id()));
  NBDK_RETURN_IF_ERROR(CheckVolumePathGiven(request.volume_path()));
  ExpandRequest out;
  out.volume_id = request.volume_id();
  out.volume_path = request.volume_path();
  out.staging_target_path = request.staging_target_path();
  if (request.has_capacity_range()) {
    out.required_bytes = request.capacity_range().required_bytes();
    out.limit_bytes = request.capacity_range().limit_bytes();
    if (out.required_bytes < 0) return Status::InvalidArgument("capacity_range.required_bytes: negative");
    if (out.limit_bytes < 0) return Status::InvalidArgument("capacity_range.limit_bytes: negative");
    if (out.limit_bytes > 0 && out.required_bytes > out.limit_bytes) {
      return Status::InvalidArgument("capacity_range: required_bytes " + std::to_string(out.required_bytes) +
                                     " exceeds limit_bytes " + std::to_string(out.limit_bytes));
    }
  }
  if (request.has_volume_capability()) {
    // NodeExpandVolume's error table: "Exceeds capabilities" is INVALID_ARGUMENT.
    auto cap = ParseVolumeCapability(request.volume_capability(), "volume_capability", Code::kInvalidArgument);
    if (!cap.ok()) return cap.status();
    out.capability = std::move(cap).value();
  }
  return out;
}

}  // namespace nbdk
