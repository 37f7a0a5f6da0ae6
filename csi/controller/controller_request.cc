#include "csi/controller/controller_request.h"

#include "base/quote_field.h"
#include "base/text_rules.h"
#include "ceph/image_spec.h"
#include "csi/controller/volume_qos.h"
#include "csi/map_options.h"
#include "csi/mkfs_options.h"
#include "csi/request_secrets.h"
#include "journal/volume_id.h"

namespace nbdk {
namespace {

using Params = google::protobuf::Map<std::string, std::string>;

std::string Get(const Params& params, const char* key) {
  auto it = params.find(key);
  return it == params.end() ? std::string() : it->second;
}

// A pool or namespace name: RADOS allows most bytes, but these end up in
// object names, rbd-nbd arguments and the stash.

}  // namespace

Result<ControllerSecrets> ParseControllerSecrets(const Params& secrets) {
  auto secret = ParseCephxSecret(secrets);
  if (!secret.ok()) return secret.status();
  return ControllerSecrets{std::move(secret->user_id), std::move(secret->user_key), ReadEncryptionPassphrase(secrets)};
}

Status CheckRequestName(const char* field, const std::string& name) {
  if (name.empty()) return Status::InvalidArgument(std::string(field) + ": missing");
  if (name.size() > 253 || HasSpaceOrControl(name)) {
    return Status::InvalidArgument(std::string(field) +
                                   ": longer than 253 bytes, or has whitespace or a control character");
  }
  return Status::Ok();
}

namespace {

Result<VolumeRef> ParseVolumeRef(const std::string& volume_id, const Params& secrets) {
  if (volume_id.empty()) return Status::InvalidArgument("volume_id: missing");
  auto decoded = DecodeVolumeId(volume_id);
  // Every volume this driver (or ceph-csi) made has an ID that decodes, so
  // one that does not names no volume: NOT_FOUND, as the spec's callers expect.
  if (!decoded.ok()) {
    return Status::NotFound("volume " + QuoteField(volume_id) + " does not exist: " + decoded.status().message());
  }
  auto s = ParseControllerSecrets(secrets);
  if (!s.ok()) return s.status();
  return VolumeRef{volume_id, std::move(*decoded), std::move(*s)};
}

int64_t RoundUpToMiB(int64_t bytes) { return (bytes + kMiB - 1) / kMiB * kMiB; }

Result<ContentSource> ParseContentSource(const csi::v1::VolumeContentSource& source) {
  ContentSource out;
  const char* field = nullptr;
  if (source.has_snapshot()) {
    out.kind = ContentSource::Kind::kSnapshot;
    out.id = source.snapshot().snapshot_id();
    field = "volume_content_source.snapshot.snapshot_id";
  } else if (source.has_volume()) {
    out.kind = ContentSource::Kind::kVolume;
    out.id = source.volume().volume_id();
    field = "volume_content_source.volume.volume_id";
  } else {
    return Status::InvalidArgument("volume_content_source: neither a snapshot nor a volume");
  }
  if (out.id.empty()) return Status::InvalidArgument(std::string(field) + ": missing");
  auto decoded = DecodeVolumeId(out.id);
  // As for volume IDs: every snapshot of this driver (or ceph-csi) has an ID
  // that decodes, so one that does not names no snapshot.
  if (!decoded.ok()) {
    return Status::NotFound(std::string(field) + " " + QuoteField(out.id) +
                            " does not exist: " + decoded.status().message());
  }
  out.decoded = std::move(*decoded);
  return out;
}

}  // namespace

Result<int64_t> VolumeSizeBytes(const csi::v1::CapacityRange* range) {
  if (range == nullptr) return kDefaultVolumeBytes;
  int64_t required = range->required_bytes(), limit = range->limit_bytes();
  if (required < 0) return Status::InvalidArgument("capacity_range.required_bytes: negative");
  if (limit < 0) return Status::InvalidArgument("capacity_range.limit_bytes: negative");
  if (limit != 0 && required > limit) {
    return Status::InvalidArgument("capacity_range: required_bytes exceeds limit_bytes");
  }
  int64_t want = required != 0 ? required : (limit != 0 ? limit : kDefaultVolumeBytes);
  if (want > INT64_MAX - kMiB)
    return Status::OutOfRange("capacity_range: " + std::to_string(want) + " bytes is too large");
  int64_t size = RoundUpToMiB(want);
  if (limit != 0 && size > limit) {
    return Status::OutOfRange("capacity_range: " + std::to_string(want) + " bytes rounded up to whole MiB (" +
                              std::to_string(size) + ") exceeds limit_bytes");
  }
  return size;
}

Result<CreateVolumeParams> ParseCreateVolumeRequest(const csi::v1::CreateVolumeRequest& request) {
  CreateVolumeParams out;
  NBDK_RETURN_IF_ERROR(CheckRequestName("name", request.name()));
  out.name = request.name();
  if (request.has_volume_content_source()) {
    auto source = ParseContentSource(request.volume_content_source());
    if (!source.ok()) return source.status();
    out.source = std::move(*source);
  }
  auto size = VolumeSizeBytes(request.has_capacity_range() ? &request.capacity_range() : nullptr);
  if (!size.ok()) return size.status();
  out.size_bytes = *size;
  if (request.volume_capabilities().empty()) return Status::InvalidArgument("volume_capabilities: missing");
  for (int i = 0; i < request.volume_capabilities_size(); ++i) {
    auto cap = ParseVolumeCapability(request.volume_capabilities(i), "volume_capabilities[" + std::to_string(i) + "]",
                                     Code::kInvalidArgument);
    if (!cap.ok()) return cap.status();
    out.capabilities.push_back(std::move(*cap));
  }

  const Params& p = request.parameters();
  NBDK_RETURN_IF_ERROR(CheckParameterNames(p));
  out.cluster_id = Get(p, "clusterID");
  out.pool = Get(p, "pool");
  out.journal_pool = Get(p, "journalPool");
  out.rados_namespace = Get(p, "radosNamespace");
  NBDK_RETURN_IF_ERROR(CheckCephName("parameters.clusterID", out.cluster_id, true));
  if (out.cluster_id.size() > kMaxVolumeIdLength - kVolumeIdFixedLength) {
    return Status::InvalidArgument("parameters.clusterID: longer than 64 bytes (the volume ID would exceed 128)");
  }
  // The cluster ID becomes part of every volume ID made here, and the node
  // stages only IDs that meet the one volume ID rule.
  VolumeId sample{.cluster_id = out.cluster_id, .object_uuid = "00000000-0000-0000-0000-000000000000"};
  if (!ValidateVolumeId(EncodeVolumeId(sample)).ok()) {
    return Status::InvalidArgument("parameters.clusterID " + QuoteField(out.cluster_id) +
                                   ": only [A-Za-z0-9._-] allowed (it becomes part of the volume ID)");
  }
  if (p.contains("topologyConstrainedPools")) {
    auto pools = ParseTopologyConstrainedPools(Get(p, "topologyConstrainedPools"));
    if (!pools.ok()) return pools.status();
    // Without requirements ceph-csi ignores the pools and uses `pool`.
    if (request.has_accessibility_requirements()) {
      out.topology_pools = std::move(*pools);
      out.accessibility = request.accessibility_requirements();
    }
  }
  NBDK_RETURN_IF_ERROR(CheckCephName("parameters.pool", out.pool, out.topology_pools.empty()));
  NBDK_RETURN_IF_ERROR(CheckCephName("parameters.journalPool", out.journal_pool, false));
  NBDK_RETURN_IF_ERROR(CheckCephName("parameters.radosNamespace", out.rados_namespace, false));
  auto layout = ParseImageLayout(p);
  if (!layout.ok()) return layout.status();
  out.image_options = std::move(*layout);
  if (out.source.kind != ContentSource::Kind::kSnapshot) NBDK_RETURN_IF_ERROR(ApplyTopologyChoice(out));
  std::string mounter = Get(p, "mounter");
  if (!mounter.empty() && mounter != "rbd-nbd") {
    return Status::InvalidArgument("parameters.mounter: " + QuoteField(mounter) + " is not supported; only rbd-nbd");
  }
  // nbdkeeper's own parameter (nbdkeeperctl map --size): the image's exact
  // name instead of <prefix><uuid>; the omap journal records it as ceph-csi
  // would any image name.
  out.image_name = Get(p, "nbdkeeper.io/imageName");
  NBDK_RETURN_IF_ERROR(CheckCephName("parameters.nbdkeeper.io/imageName", out.image_name, false));
  if (p.contains("volumeNamePrefix")) {
    if (!out.image_name.empty()) {
      return Status::InvalidArgument(
          "parameters.volumeNamePrefix: not with nbdkeeper.io/imageName, which names the "
          "whole image");
    }
    out.name_prefix = Get(p, "volumeNamePrefix");
    // The image name is the prefix and a uuid: check the longest such name.
    NBDK_RETURN_IF_ERROR(CheckCephName("parameters.volumeNamePrefix", out.name_prefix, true));
    NBDK_RETURN_IF_ERROR(
        CheckCephName("parameters.volumeNamePrefix", out.name_prefix + "00000000-0000-0000-0000-000000000000", true));
  }
  out.map_options = Get(p, "mapOptions");
  auto args = MapOptionArguments(out.map_options);
  if (!args.ok()) return args.status().WithContext("parameters.mapOptions");
  out.unmap_options = Get(p, "unmapOptions");
  auto unmap = UnmapOptionsCsv(out.unmap_options);
  if (!unmap.ok()) return unmap.status().WithContext("parameters.unmapOptions");
  // Checked as the node will for each filesystem asked for; a block volume
  // is never formatted.
  out.mkfs_options = Get(p, "mkfsOptions");
  for (const VolumeCapabilitySpec& cap : out.capabilities) {
    if (cap.block) continue;
    auto mkfs = MkfsOptions(cap.fs_type, out.mkfs_options);
    if (!mkfs.ok()) return mkfs.status().WithContext("parameters");
  }
  out.metadata = VolumeMetadataOf(p);
  NBDK_RETURN_IF_ERROR(CheckQosParameters(p));
  out.qos_metadata = QosImageMetadata(p, out.size_bytes);
  auto kms_id = ParseEncryptionKmsId(p, "parameters.");
  if (!kms_id.ok()) return kms_id.status();
  out.encryption_kms_id = std::move(*kms_id);

  auto secrets = ParseControllerSecrets(request.secrets());
  if (!secrets.ok()) return secrets.status();
  out.secrets = std::move(*secrets);
  // Both KMSs read it (ceph-csi refuses the request without it too): a
  // StorageClass that lacks it fails here, not at the first stage.
  if (out.encryption_kms_id && out.secrets.encryption_passphrase.empty()) {
    return Status::InvalidArgument("secrets: encryptionPassphrase: missing or empty (parameters.encrypted is true)");
  }
  return out;
}

Status ApplyTopologyChoice(CreateVolumeParams& params, std::string_view only_pool) {
  if (params.topology_pools.empty()) return Status::Ok();
  auto choice = ChooseTopologyPool(params.topology_pools, params.accessibility, only_pool);
  if (!choice.ok()) return choice.status();
  params.pool = choice->pool;
  params.journal_pool = choice->pool;
  params.image_options.data_pool = choice->data_pool;
  params.accessible_topology = std::move(choice->segments);
  return Status::Ok();
}

Result<std::optional<VolumeRef>> ParseDeleteVolumeRequest(const csi::v1::DeleteVolumeRequest& request) {
  if (!request.volume_id().empty() && !DecodeVolumeId(request.volume_id()).ok()) {
    return std::optional<VolumeRef>();
  }
  auto ref = ParseVolumeRef(request.volume_id(), request.secrets());
  if (!ref.ok()) return ref.status();
  return std::optional<VolumeRef>(std::move(*ref));
}

Result<ControllerExpandParams> ParseControllerExpandRequest(const csi::v1::ControllerExpandVolumeRequest& request) {
  auto ref = ParseVolumeRef(request.volume_id(), request.secrets());
  if (!ref.ok()) return ref.status();
  ControllerExpandParams out;
  out.volume = std::move(*ref);
  if (!request.has_capacity_range()) return Status::InvalidArgument("capacity_range: missing");
  if (request.capacity_range().required_bytes() <= 0 && request.capacity_range().limit_bytes() <= 0) {
    return Status::InvalidArgument("capacity_range: neither required_bytes nor limit_bytes is set");
  }
  auto size = VolumeSizeBytes(&request.capacity_range());
  if (!size.ok()) return size.status();
  out.size_bytes = *size;
  if (request.has_volume_capability()) {
    auto cap = ParseVolumeCapability(request.volume_capability(), "volume_capability", Code::kInvalidArgument);
    if (!cap.ok()) return cap.status();
    out.node_expansion_required = !cap->block;
  }
  return out;
}

Result<ValidateParams> ParseValidateRequest(const csi::v1::ValidateVolumeCapabilitiesRequest& request) {
  auto ref = ParseVolumeRef(request.volume_id(), request.secrets());
  if (!ref.ok()) return ref.status();
  if (request.volume_capabilities().empty()) return Status::InvalidArgument("volume_capabilities: missing");
  ValidateParams out;
  out.volume = std::move(*ref);
  for (int i = 0; i < request.volume_capabilities_size() && out.capabilities.ok(); ++i) {
    auto cap = ParseVolumeCapability(request.volume_capabilities(i), "volume_capabilities[" + std::to_string(i) + "]",
                                     Code::kFailedPrecondition);
    // A malformed capability is the caller's error; an unsupported one is
    // an answer (not confirmed), as the spec asks.
    if (!cap.ok() && cap.status().code() == Code::kInvalidArgument) return cap.status();
    if (!cap.ok()) out.capabilities = cap.status();
  }
  return out;
}

std::map<std::string, std::string> VolumeContextFor(const CreateVolumeParams& params, const std::string& image_name) {
  std::map<std::string, std::string> ctx = {
      {"clusterID", params.cluster_id}, {"pool", params.pool}, {"imageName", image_name}, {"mounter", "rbd-nbd"}};
  if (!params.journal_pool.empty()) ctx["journalPool"] = params.journal_pool;
  if (!params.rados_namespace.empty()) ctx["radosNamespace"] = params.rados_namespace;
  if (!params.map_options.empty()) ctx["mapOptions"] = params.map_options;
  if (!params.unmap_options.empty()) ctx["unmapOptions"] = params.unmap_options;
  if (!params.mkfs_options.empty()) ctx["mkfsOptions"] = params.mkfs_options;
  if (!params.image_options.data_pool.empty()) ctx["dataPool"] = params.image_options.data_pool;
  if (params.encryption_kms_id) {
    ctx["encrypted"] = "true";
    ctx["encryptionType"] = kBlockEncryptionType;
    ctx["encryptionKMSID"] = *params.encryption_kms_id;
  }
  return ctx;
}

}  // namespace nbdk
