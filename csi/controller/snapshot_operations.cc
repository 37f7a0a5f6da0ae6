#include "csi/controller/snapshot_operations.h"

#include <rbd/features.h>

#include <algorithm>
#include <map>
#include <optional>

#include "base/quote_field.h"
#include "ceph/image_metadata.h"
#include "ceph/omap_store.h"
#include "ceph/omap_volume_keys.h"
#include "ceph/rbd_clone.h"
#include "csi/controller/clone_operations.h"
#include "csi/controller/omap_volume_journal.h"
#include "csi/controller/volume_lookup.h"
#include "journal/volume_id.h"

namespace nbdk {
namespace {

// ceph-csi's snapshot images: layering, and deep-flatten so that they can
// be flattened while they carry their snapshot.
constexpr uint64_t kSnapshotImageFeatures = RBD_FEATURE_LAYERING | RBD_FEATURE_DEEP_FLATTEN;

// The journal pool of an image in `image_pool_id`: `journal_pool_id` when
// set (csi.journalpool), else the image pool itself (then `io` is empty).
struct JournalPool {
  std::optional<IoCtx> io;
  int64_t id = 0;
};

Result<JournalPool> OpenJournalPool(const std::shared_ptr<RadosCluster>& cluster,
                                    std::optional<int64_t> journal_pool_id, int64_t image_pool_id,
                                    const std::string& ns) {
  JournalPool out;
  out.id = journal_pool_id.value_or(image_pool_id);
  if (out.id == image_pool_id) return out;
  auto io = IoCtx::OpenById(cluster, out.id, ns);
  if (!io.ok()) return io.status().WithContext("journal pool");
  out.io.emplace(std::move(*io));
  return out;
}

// The volume whose image is `image` in `io`'s pool (csi.source records only
// the name): csi-vol-<uuid> names it directly, even after the volume was
// deleted; another name (nbdkeeper.io/imageName) is looked up in the volume
// journal of `journal_store`. "" when no journaled volume has it.
Result<std::string> SourceVolumeId(const std::string& cluster_id, int64_t pool_id, IoCtx& io, OmapStore& journal_store,
                                   int64_t journal_pool_id, const std::string& image) {
  const std::string prefix = DefaultImageName("");
  if (image.rfind(prefix, 0) == 0 && IsCanonicalUuid(image.substr(prefix.size()))) {
    return EncodeVolumeId({1, cluster_id, pool_id, image.substr(prefix.size())});
  }
  RadosOmapStore images(io);
  auto matches = [&](const std::string& uuid) -> Result<bool> {
    auto attrs = ReadVolumeAttributes(images, uuid);
    if (!attrs.ok()) return attrs.status();
    return *attrs && (*attrs)->image_name == image;
  };
  VolumeJournal volumes(journal_store, images, {pool_id, journal_pool_id}, kDefaultJournalInstance, RandomUuid);
  auto entries = volumes.List();
  if (!entries.ok()) return entries.status();
  for (const auto& [name, value] : *entries) {
    if (value.image_pool_id.value_or(journal_pool_id) != pool_id) continue;
    auto hit = matches(value.uuid);
    if (!hit.ok()) return hit.status();
    if (*hit) return EncodeVolumeId({1, cluster_id, pool_id, value.uuid});
  }
  return std::string();
}

// Size and creation time from the snapshot's image.
Result<SnapshotInfo> Describe(const std::string& cluster_id, int64_t pool_id, IoCtx& io, const std::string& uuid,
                              const std::string& image) {
  auto info = StatImage(io, image);
  if (!info.ok()) return info.status();
  SnapshotInfo out;
  out.snapshot_id = EncodeVolumeId({1, cluster_id, pool_id, uuid});
  out.size_bytes = static_cast<int64_t>(info->size_bytes);
  out.created_s = info->created_s;
  out.created_ns = info->created_ns;
  return out;
}

// Removes what MakeSnapshotImage made, in reverse.
Status DiscardSnapshotImage(const std::shared_ptr<RadosCluster>& cluster, IoCtx& io, const std::string& source,
                            const std::string& snap) {
  NBDK_RETURN_IF_ERROR(RemoveSnapshot(io, snap, snap));
  NBDK_RETURN_IF_ERROR(RemoveOrTrashImage(cluster, io, snap));
  // A crash between the temporary snapshot and its clone leaves it behind.
  return source.empty() ? Status::Ok() : RemoveSnapshot(io, source, snap);
}

}  // namespace

std::vector<RbdStep> SnapshotEncryptionSteps(IoCtx& io, const CreateSnapshotParams& params,
                                             const std::string& source_image, const std::string& snap,
                                             const std::string& snapshot_id,
                                             const std::optional<KmsSettings>& source_kms) {
  if (!source_kms) return {};
  auto metadata = std::make_shared<RbdImageMetadata>(io);
  return CopyEncryptionSteps({metadata, source_image, params.source.volume_id, source_kms->type},
                             {metadata, snap, snapshot_id, source_kms->type},
                             params.source.secrets.encryption_passphrase);
}

std::vector<RbdStep> SnapshotImageSteps(const std::shared_ptr<RadosCluster>& cluster, IoCtx& io,
                                        const std::string& source, const std::string& snap,
                                        const std::vector<RbdStep>& encryption) {
  std::vector<RbdStep> steps;
  ImageCreateOptions layout;  // the source's data pool, librbd's layout
  layout.features = kSnapshotImageFeatures;
  AppendCloneThroughTemporarySnapshot(steps, io, source, snap, io, snap, layout);
  // Before snap@snap, as ceph-csi copies it (image metadata is not part of
  // an RBD snapshot either way).
  steps.insert(steps.end(), encryption.begin(), encryption.end());
  IoCtx* pool = &io;
  steps.push_back({"snapshot " + snap + "@" + snap, [=] { return CreateSnapshot(*pool, snap, snap); }});
  steps.push_back(FlattenStep(cluster, io, snap, kHardMaxCloneDepth));
  return steps;
}

Result<SnapshotInfo> CreateSnapshotBlocking(const std::shared_ptr<RadosCluster>& cluster,
                                            const CreateSnapshotParams& params, const std::string& ns,
                                            const KmsResolver& resolve_kms) {
  const VolumeRef& source = params.source;
  auto found = FindVolume(cluster, source, ns);
  if (!found.ok()) return found.status();
  if (!found->image_pool || !found->attributes) {
    return Status::NotFound("source_volume_id " + QuoteField(source.volume_id) + " does not exist");
  }
  IoCtx& io = *found->image_pool;
  const std::string& image = found->attributes->image_name;
  auto info = StatImage(io, image);
  if (!info.ok() && info.status().code() == Code::kNotFound) {
    return Status::NotFound("source_volume_id " + QuoteField(source.volume_id) + ": image " + image +
                            " does not exist");
  }
  if (!info.ok()) return info.status();
  if (!(info->features & RBD_FEATURE_LAYERING)) {
    return Status::InvalidArgument("source_volume_id " + QuoteField(source.volume_id) + ": image " + image +
                                   " lacks the layering feature snapshots need");
  }
  const std::string what = "source_volume_id " + QuoteField(source.volume_id);
  auto kms = RecordedKms(found->attributes->encryption, resolve_kms, what);
  if (!kms.ok()) return kms.status();
  if (*kms && (*kms)->type == KmsType::kMetadata && source.secrets.encryption_passphrase.empty()) {
    return Status::InvalidArgument("secrets: encryptionPassphrase: missing or empty (" + what +
                                   " is encrypted with KMS " + QuoteField((*kms)->kms_id) +
                                   " of type metadata, whose key the snapshot re-wraps)");
  }
  const int64_t pool_id = source.decoded.pool_id;
  auto journal_pool = OpenJournalPool(cluster, found->attributes->journal_pool_id, pool_id, ns);
  if (!journal_pool.ok()) return journal_pool.status();
  RadosOmapStore images(io);
  RadosOmapStore directory(journal_pool->io ? *journal_pool->io : io);
  VolumeJournal journal(directory, images, {pool_id, journal_pool->id}, kDefaultJournalInstance, RandomUuid,
                        kSnapshotJournalNames);

  auto existing = journal.Lookup(params.name, image);
  if (!existing.ok()) return existing.status();
  VolumeReservation reservation;
  auto make = [&] {
    const std::string id = EncodeVolumeId({1, source.decoded.cluster_id, pool_id, reservation.uuid});
    auto encryption = SnapshotEncryptionSteps(io, params, image, reservation.image_name, id, *kms);
    return RunRbdSteps(SnapshotImageSteps(cluster, io, image, reservation.image_name, encryption));
  };
  if (*existing) {
    reservation = **existing;
    NBDK_RETURN_IF_ERROR(make());
  } else {
    auto reserved =
        journal.Reserve(params.name, "", image, "", *kms ? JournalEncryptionFor((*kms)->kms_id) : JournalEncryption{});
    if (!reserved.ok()) return reserved.status();
    reservation = *reserved;
    Status made = make();
    if (!made.ok()) {
      if (DiscardSnapshotImage(cluster, io, image, reservation.image_name).ok()) {
        (void)journal.Undo(params.name, reservation.uuid);
      }
      return made;
    }
  }
  auto out = Describe(source.decoded.cluster_id, pool_id, io, reservation.uuid, reservation.image_name);
  if (!out.ok()) return out.status();
  out->source_volume_id = source.volume_id;
  return out;
}

Status DeleteSnapshotBlocking(const std::shared_ptr<RadosCluster>& cluster, const VolumeRef& snapshot,
                              const std::string& ns) {
  auto found = FindVolume(cluster, snapshot, ns, kSnapshotJournalNames);
  if (!found.ok()) return found.status();
  if (!found->image_pool || !found->attributes) return Status::Ok();
  IoCtx& io = *found->image_pool;
  const VolumeAttributes& attrs = *found->attributes;
  NBDK_RETURN_IF_ERROR(DiscardSnapshotImage(cluster, io, attrs.source, attrs.image_name));
  auto journal_pool = OpenJournalPool(cluster, attrs.journal_pool_id, snapshot.decoded.pool_id, ns);
  if (!journal_pool.ok()) return journal_pool.status();
  RadosOmapStore images(io);
  RadosOmapStore directory(journal_pool->io ? *journal_pool->io : io);
  VolumeJournal journal(directory, images, {snapshot.decoded.pool_id, journal_pool->id}, kDefaultJournalInstance,
                        RandomUuid, kSnapshotJournalNames);
  return journal.Undo(attrs.request_name, snapshot.decoded.object_uuid);
}

Result<std::vector<SnapshotInfo>> ListSnapshotsBlocking(const std::shared_ptr<RadosCluster>& cluster,
                                                        const std::string& cluster_id,
                                                        const ListSnapshotsParams& params, const std::string& ns) {
  std::vector<SnapshotInfo> out;
  // Journal pools to read, and the source's image when filtering by it.
  std::vector<int64_t> journal_pools;
  if (params.source_volume_id) {
    if (params.source_volume_id->cluster_id != cluster_id) return out;
    VolumeRef ref{params.source_volume_id_text, *params.source_volume_id, {}};
    auto source = FindVolume(cluster, ref, ns);
    if (!source.ok()) return source.status();
    if (!source->attributes) return out;
    journal_pools.push_back(source->attributes->journal_pool_id.value_or(ref.decoded.pool_id));
  } else if (params.snapshot_id) {
    if (params.snapshot_id->cluster_id != cluster_id) return out;
  } else {
    auto pools = cluster->PoolIds();
    if (!pools.ok()) return pools.status();
    journal_pools = std::move(*pools);
  }

  // (image pool id, uuid) of every candidate, from one ID or the journals.
  std::vector<std::pair<int64_t, std::string>> candidates;
  if (params.snapshot_id) {
    candidates.emplace_back(params.snapshot_id->pool_id, params.snapshot_id->object_uuid);
  } else {
    for (int64_t pool : journal_pools) {
      auto io = IoCtx::OpenById(cluster, pool, ns);
      if (!io.ok() && io.status().code() == Code::kNotFound) continue;
      if (!io.ok()) return io.status();
      RadosOmapStore store(*io);
      VolumeJournal journal(store, store, {pool, pool}, kDefaultJournalInstance, RandomUuid, kSnapshotJournalNames);
      auto entries = journal.List();
      // Every pool is read only without filters; a pool the user may not
      // read holds none of its snapshots.
      bool unreadable = !entries.ok() && entries.status().code() == Code::kFailedPrecondition;
      if (unreadable && !params.source_volume_id) continue;
      if (!entries.ok()) return entries.status();
      for (const auto& [name, value] : *entries)
        candidates.emplace_back(value.image_pool_id.value_or(pool), value.uuid);
    }
  }

  for (const auto& [pool, uuid] : candidates) {
    auto io = IoCtx::OpenById(cluster, pool, ns);
    if (!io.ok() && io.status().code() == Code::kNotFound) continue;
    if (!io.ok()) return io.status();
    RadosOmapStore images(*io);
    auto attrs = ReadVolumeAttributes(images, uuid, kSnapshotJournalNames);
    if (!attrs.ok()) return attrs.status();
    if (!*attrs) continue;
    auto info = Describe(cluster_id, pool, *io, uuid, (*attrs)->image_name);
    if (!info.ok() && info.status().code() == Code::kNotFound) continue;
    if (!info.ok()) return info.status();
    auto journal_pool = OpenJournalPool(cluster, (*attrs)->journal_pool_id, pool, ns);
    if (!journal_pool.ok()) return journal_pool.status();
    RadosOmapStore directory(journal_pool->io ? *journal_pool->io : *io);
    auto source = SourceVolumeId(cluster_id, pool, *io, directory, journal_pool->id, (*attrs)->source);
    if (!source.ok()) return source.status();
    info->source_volume_id = std::move(*source);
    if (params.source_volume_id && info->source_volume_id != EncodeVolumeId(*params.source_volume_id)) continue;
    out.push_back(std::move(*info));
  }
  std::sort(out.begin(), out.end(),
            [](const SnapshotInfo& a, const SnapshotInfo& b) { return a.snapshot_id < b.snapshot_id; });
  return out;
}

}  // namespace nbdk
