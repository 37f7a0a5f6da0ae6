#include "csi/controller/clone_operations.h"

#include <rbd/features.h>

#include <limits>

#include "base/quote_field.h"
#include "ceph/omap_volume_keys.h"
#include "ceph/rbd_clone.h"
#include "ceph/rbd_image.h"
#include "csi/controller/volume_lookup.h"
#include "journal/volume_id.h"

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
  if (!found->attributes) return Status::NotFound("snapshot " + QuoteField(source.id) + " does not exist");
  ResolvedSource out;
  out.kind = source.kind;
  out.image = found->attributes->image_name;
  out.encryption = found->attributes->encryption;
  out.io.emplace(std::move(*found->image_pool));
  // A snapshot whose CreateSnapshot never finished has no RBD snapshot yet.
  auto ready = SnapshotExists(*out.io, out.image, out.image);
  if (!ready.ok() && ready.status().code() != Code::kNotFound) return ready.status();
  if (!ready.ok() || !*ready) {
    return Status::NotFound("snapshot " + QuoteField(source.id) + " does not exist (not made)");
  }
  return out;
}

Result<ResolvedSource> ResolveVolume(const std::shared_ptr<RadosCluster>& cluster, const ContentSource& source,
                                     const std::string& ns) {
  VolumeRef ref{source.id, source.decoded, {}};
  auto found = FindVolume(cluster, ref, ns);
  if (!found.ok()) return found.status();
  if (!found->attributes) return Status::NotFound("volume " + QuoteField(source.id) + " does not exist");
  ResolvedSource out;
  out.kind = source.kind;
  out.image = found->attributes->image_name;
  out.encryption = found->attributes->encryption;
  out.io.emplace(std::move(*found->image_pool));
  return out;
}

}  // namespace

std::string TemporaryCloneName(const std::string& image) { return image + "-temp"; }

std::string RecordedSource(const ContentSource& source) {
  return source.kind == ContentSource::Kind::kVolume ? source.id : "";
}

Result<std::optional<ResolvedSource>> RecordedSourceOf(const std::shared_ptr<RadosCluster>& cluster,
                                                       const std::string& recorded, const std::string& ns) {
  auto id = DecodeVolumeId(recorded);
  if (!id.ok()) return std::optional<ResolvedSource>();
  // Any size fits: only the image is wanted.
  auto source = ResolveContentSource(cluster, {ContentSource::Kind::kVolume, recorded, *id},
                                     std::numeric_limits<int64_t>::max(), ns);
  if (!source.ok() && source.status().code() == Code::kNotFound) return std::optional<ResolvedSource>();
  if (!source.ok()) return source.status();
  return std::optional<ResolvedSource>(std::move(*source));
}

Result<ResolvedSource> ResolveContentSource(const std::shared_ptr<RadosCluster>& cluster, const ContentSource& source,
                                            int64_t size_bytes, const std::string& ns) {
  if (source.kind == ContentSource::Kind::kNone) return ResolvedSource{};
  auto resolved = source.kind == ContentSource::Kind::kSnapshot ? ResolveSnapshot(cluster, source, ns)
                                                                : ResolveVolume(cluster, source, ns);
  if (!resolved.ok()) return resolved.status();
  auto info = StatImage(*resolved->io, resolved->image);
  if (!info.ok() && info.status().code() == Code::kNotFound) {
    return Status::NotFound("volume_content_source " + QuoteField(source.id) + ": image " + resolved->image +
                            " does not exist");
  }
  if (!info.ok()) return info.status();
  resolved->size_bytes = info->size_bytes;
  if (static_cast<uint64_t>(size_bytes) < info->size_bytes) {
    return Status::OutOfRange("capacity_range: " + std::to_string(size_bytes) + " bytes is smaller than the source " +
                              QuoteField(source.id) + " (" + std::to_string(info->size_bytes) + " bytes)");
  }
  return resolved;
}

void AppendCloneThroughTemporarySnapshot(std::vector<RbdStep>& steps, IoCtx& parent_io, const std::string& parent,
                                         const std::string& snap, IoCtx& child_io, const std::string& child,
                                         const ImageCreateOptions& layout) {
  IoCtx* from = &parent_io;
  IoCtx* to = &child_io;
  steps.push_back(
      {"snapshot " + parent + "@" + snap, [=] { return CreateSnapshotForClone(*from, parent, snap, *to, child); }});
  steps.push_back({"clone " + child + " from " + parent + "@" + snap,
                   [=] { return CloneImage(*from, parent, snap, *to, child, layout); }});
  steps.push_back({"remove " + parent + "@" + snap, [=] { return RemoveSnapshot(*from, parent, snap); }});
}

RbdStep FlattenStep(const std::shared_ptr<RadosCluster>& cluster, IoCtx& io, const std::string& image, int limit) {
  IoCtx* pool = &io;
  return {"flatten " + image + " at depth " + std::to_string(limit), [=] {
            auto flattened = FlattenIfDeeper(cluster, *pool, image, limit);
            return flattened.ok() ? Status::Ok() : flattened.status();
          }};
}

std::vector<RbdStep> VolumeImageSteps(const std::shared_ptr<RadosCluster>& cluster, IoCtx& io, const std::string& image,
                                      const CreateVolumeParams& params, ResolvedSource& source,
                                      const std::vector<RbdStep>& encryption) {
  const uint64_t size = static_cast<uint64_t>(params.size_bytes);
  // The StorageClass's layout, as ceph-csi clones with it; a clone needs
  // layering whatever the StorageClass lists.
  ImageCreateOptions layout = params.image_options;
  layout.features |= RBD_FEATURE_LAYERING;
  IoCtx* to = &io;
  IoCtx* from = source.io ? &*source.io : nullptr;
  const std::string parent = source.image;
  std::vector<RbdStep> steps;
  switch (source.kind) {
    case ContentSource::Kind::kNone:
      // Exclusive (see csi/controller/rbd_steps.h): an image of the name is another's.
      steps.push_back({"create " + image,
                       [=, creating = params.image_options] { return CreateImage(*to, image, size, creating); }});
      steps.insert(steps.end(), encryption.begin(), encryption.end());
      return steps;
    case ContentSource::Kind::kSnapshot:
      // Restoring adds one level: flatten the snapshot image first when
      // that level would reach the hard limit (ceph-csi: hard limit - 1).
      steps.push_back(FlattenStep(cluster, *from, parent, kHardMaxCloneDepth - 1));
      steps.push_back({"clone " + image + " from " + parent + "@" + parent,
                       [=] { return CloneImage(*from, parent, parent, *to, image, layout); }});
      break;
    case ContentSource::Kind::kVolume: {
      // Cloning adds two levels (the temporary clone and the clone).
      steps.push_back(FlattenStep(cluster, *from, parent, kHardMaxCloneDepth - 2));
      const std::string temp = TemporaryCloneName(image);
      ImageCreateOptions intermediate;  // the parent's data pool, librbd's layout
      intermediate.features = kIntermediateFeatures;
      AppendCloneThroughTemporarySnapshot(steps, *from, parent, temp, io, temp, intermediate);
      AppendCloneThroughTemporarySnapshot(steps, io, temp, image, io, image, layout);
      break;
    }
  }
  // ceph-csi copies the encryption before it grows the image.
  steps.insert(steps.end(), encryption.begin(), encryption.end());
  steps.push_back(
      {"grow " + image + " to " + std::to_string(size) + " bytes", [=] { return GrowImage(*to, image, size); }});
  return steps;
}

Status DiscardVolumeImage(const std::shared_ptr<RadosCluster>& cluster, IoCtx& io, const std::string& image,
                          bool temporary_clone, ResolvedSource* source) {
  const std::string temp = TemporaryCloneName(image);
  NBDK_RETURN_IF_ERROR(RemoveOrTrashImage(cluster, io, image));
  if (!temporary_clone) return Status::Ok();
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
