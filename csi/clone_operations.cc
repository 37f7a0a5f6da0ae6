#include "csi/clone_operations.h"

#include <rbd/features.h>

#include "csi/controller_operations.h"
#include "journal/ceph/omap_volume_keys.h"
#include "journal/ceph/rbd_clone.h"
#include "journal/ceph/rbd_image.h"

namespace nbdk {
namespace {

// The features of ceph-csi's intermediate images (snapshot images and
// temporary clones): deep-flatten lets them be flattened with snapshots.
constexpr uint64_t kIntermediateFeatures = RBD_FEATURE_LAYERING | RBD_FEATURE_DEEP_FLATTEN;

Result<ResolvedSource> ResolveSnapshot(const std::shared_ptr<RadosCluster>& cluster, const ContentSource& source,
                                       const std::string& ns) {
  VolumeRef ref{source.id, source.decoded, {}};
  auto found = FindVolume(cluster, ref, ns, kSnapshotJournalNames);
  if (!found.ok()) return found.status();
  if (!found->attributes) return Status::NotFound("snapshot " + source.id + " does not exist");
  ResolvedSource out;
  out.kind = source.kind;
  out.image = found->attributes->image_name;
  out.io.emplace(std::move(*found->image_pool));
  // A snapshot whose CreateSnapshot never finished has no RBD snapshot yet.
  auto ready = SnapshotExists(*out.io, out.image, out.image);
  if (!ready.ok() && ready.status().code() != Code::kNotFound) return ready.status();
  if (!ready.ok() || !*ready) return Status::NotFound("snapshot " + source.id + " does not exist (not made)");
  return out;
}

Result<ResolvedSource> ResolveVolume(const std::shared_ptr<RadosCluster>& cluster, const ContentSource& source,
                                     const std::string& ns) {
  VolumeRef ref{source.id, source.decoded, {}};
  auto found = FindVolume(cluster, ref, ns);
  if (!found.ok()) return found.status();
  if (!found->attributes) return Status::NotFound("volume " + source.id + " does not exist");
  ResolvedSource out;
  out.kind = source.kind;
  out.image = found->attributes->image_name;
  out.io.emplace(std::move(*found->image_pool));
  return out;
}

}  // namespace

std::string TemporaryCloneName(const std::string& image) { return image + "-temp"; }

Result<ResolvedSource> ResolveContentSource(const std::shared_ptr<RadosCluster>& cluster,
                                            const ContentSource& source, int64_t size_bytes, const std::string& ns) {
  if (source.kind == ContentSource::Kind::kNone) return ResolvedSource{};
  auto resolved = source.kind == ContentSource::Kind::kSnapshot ? ResolveSnapshot(cluster, source, ns)
                                                                : ResolveVolume(cluster, source, ns);
  if (!resolved.ok()) return resolved.status();
  auto info = StatImage(*resolved->io, resolved->image);
  if (!info.ok() && info.status().code() == Code::kNotFound) {
    return Status::NotFound("volume_content_source " + source.id + ": image " + resolved->image + " does not exist");
  }
  if (!info.ok()) return info.status();
  resolved->size_bytes = info->size_bytes;
  if (static_cast<uint64_t>(size_bytes) < info->size_bytes) {
    return Status::OutOfRange("capacity_range: " + std::to_string(size_bytes) + " bytes is smaller than the source " +
                              source.id + " (" + std::to_string(info->size_bytes) + " bytes)");
  }
  return resolved;
}

Status MakeVolumeImage(const std::shared_ptr<RadosCluster>& cluster, IoCtx& io, const std::string& image,
                       const CreateVolumeParams& params, ResolvedSource& source) {
  const uint64_t size = static_cast<uint64_t>(params.size_bytes);
  // A clone needs layering whatever the StorageClass lists.
  const uint64_t features = params.features | RBD_FEATURE_LAYERING;
  switch (source.kind) {
    case ContentSource::Kind::kNone: {
      Status created = CreateImage(io, image, size, params.features);
      return created.code() == Code::kAlreadyExists ? Status::Ok() : created;
    }
    case ContentSource::Kind::kSnapshot: {
      // Restoring adds one level: flatten the snapshot image first when
      // that level would reach the hard limit (ceph-csi: hard limit - 1).
      auto flattened = FlattenIfDeeper(cluster, *source.io, source.image, kHardMaxCloneDepth - 1);
      if (!flattened.ok()) return flattened.status();
      NBDK_RETURN_IF_ERROR(CloneImage(*source.io, source.image, source.image, io, image, features));
      break;
    }
    case ContentSource::Kind::kVolume: {
      // Cloning adds two levels (the temporary clone and the clone).
      auto flattened = FlattenIfDeeper(cluster, *source.io, source.image, kHardMaxCloneDepth - 2);
      if (!flattened.ok()) return flattened.status();
      const std::string temp = TemporaryCloneName(image);
      NBDK_RETURN_IF_ERROR(
          CloneThroughTemporarySnapshot(*source.io, source.image, temp, io, temp, kIntermediateFeatures));
      NBDK_RETURN_IF_ERROR(CloneThroughTemporarySnapshot(io, temp, image, io, image, features));
      break;
    }
  }
  return GrowImage(io, image, size);
}

Status DiscardVolumeImage(const std::shared_ptr<RadosCluster>& cluster, IoCtx& io, const std::string& image,
                          ResolvedSource* source) {
  const std::string temp = TemporaryCloneName(image);
  NBDK_RETURN_IF_ERROR(RemoveOrTrashImage(cluster, io, image));
  // A user snapshot left on the temporary clone by a crash would make it
  // look depended on: remove it before the temporary clone.
  NBDK_RETURN_IF_ERROR(RemoveSnapshot(io, temp, image));
  NBDK_RETURN_IF_ERROR(RemoveOrTrashImage(cluster, io, temp));
  if (source && source->kind == ContentSource::Kind::kVolume) {
    NBDK_RETURN_IF_ERROR(RemoveSnapshot(*source->io, source->image, temp));
  }
  return Status::Ok();
}

}  // namespace nbdk
