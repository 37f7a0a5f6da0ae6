#include "csi/controller/controller_operations.h"

#include <optional>

#include "base/quote_field.h"
#include "ceph/image_metadata.h"
#include "ceph/omap_store.h"
#include "ceph/omap_volume_keys.h"
#include "ceph/rbd_image.h"
#include "csi/controller/clone_operations.h"
#include "csi/controller/omap_volume_journal.h"
#include "csi/controller/volume_claim.h"
#include "csi/controller/volume_encryption.h"
#include "csi/controller/volume_lookup.h"
#include "csi/controller/volume_qos.h"

namespace nbdk {

std::vector<RbdStep> VolumeEncryptionSteps(IoCtx& io, const std::string& image, const std::string& volume_id,
                                           const CreateVolumeParams& params, ResolvedSource& source,
                                           const VolumeEncryptionPlan& plan) {
  if (!plan.volume) return {};
  const SecretBytes& secret = params.secrets.encryption_passphrase;
  EncryptedImage target{std::make_shared<RbdImageMetadata>(io), image, volume_id, plan.volume->type};
  if (!plan.source) return PrepareEncryptionSteps(target, secret);
  EncryptedImage from{std::make_shared<RbdImageMetadata>(*source.io), source.image, params.source.id,
                      plan.source->type};
  return CopyEncryptionSteps(from, target, secret);
}

Status ChooseRestoreTopology(RadosCluster& cluster, CreateVolumeParams& params) {
  if (params.topology_pools.empty() || params.source.kind != ContentSource::Kind::kSnapshot) return Status::Ok();
  auto pool = cluster.PoolName(params.source.decoded.pool_id);
  if (!pool.ok()) return pool.status().WithContext("volume_content_source.snapshot: its pool");
  return ApplyTopologyChoice(params, *pool);
}

Result<CreatedVolume> CreateVolumeBlocking(const std::shared_ptr<RadosCluster>& cluster,
                                           const CreateVolumeParams& params, const std::string& ns,
                                           const std::optional<KmsSettings>& volume_kms,
                                           const KmsResolver& resolve_kms) {
  auto pool_id = cluster->PoolId(params.pool);
  if (!pool_id.ok()) return pool_id.status().WithContext("parameters.pool");
  // librbd would say only "no such file" of a missing data pool.
  if (!params.image_options.data_pool.empty()) {
    auto data_pool = cluster->PoolId(params.image_options.data_pool);
    if (!data_pool.ok()) return data_pool.status().WithContext("parameters.dataPool");
  }
  auto image_io = IoCtx::Open(cluster, params.pool, ns);
  if (!image_io.ok()) return image_io.status();
  std::optional<IoCtx> journal_io;
  int64_t journal_pool_id = *pool_id;
  if (!params.journal_pool.empty() && params.journal_pool != params.pool) {
    auto id = cluster->PoolId(params.journal_pool);
    if (!id.ok()) return id.status().WithContext("parameters.journalPool");
    journal_pool_id = *id;
    auto io = IoCtx::Open(cluster, params.journal_pool, ns);
    if (!io.ok()) return io.status();
    journal_io.emplace(std::move(*io));
  }
  RadosOmapStore volumes(*image_io);
  RadosOmapStore directory(journal_io ? *journal_io : *image_io);
  VolumeJournal journal(directory, volumes, {*pool_id, journal_pool_id}, kDefaultJournalInstance, RandomUuid);

  // The source and the encryption are checked first: an unknown source, or
  // one encrypted otherwise than asked, reserves nothing.
  auto source = ResolveContentSource(cluster, params.source, params.size_bytes, ns);
  if (!source.ok()) return source.status();
  auto encryption = PlanVolumeEncryption(params, volume_kms, source->encryption, resolve_kms);
  if (!encryption.ok()) return encryption.status();
  auto claim = ClaimVolumeName(journal, params, [&image_io](const std::string& image) -> Result<bool> {
    auto size = ImageSize(*image_io, image);
    if (!size.ok()) return size.status();
    return size->has_value();
  });
  if (!claim.ok()) return claim.status();
  const VolumeReservation& reservation = claim->reservation;
  const std::string volume_id = EncodeVolumeId({1, params.cluster_id, *pool_id, reservation.uuid});
  const std::vector<RbdStep> encryption_steps =
      VolumeEncryptionSteps(*image_io, reservation.image_name, volume_id, params, *source, *encryption);
  const std::vector<RbdStep> steps =
      VolumeImageSteps(cluster, *image_io, reservation.image_name, params, *source, encryption_steps);
  if (!claim->fresh) {
    auto size = ImageSize(*image_io, reservation.image_name);
    if (!size.ok()) return size.status();
    // A clone smaller than requested is one a crash kept from growing.
    bool growing = *size && source->kind != ContentSource::Kind::kNone && **size < uint64_t(params.size_bytes);
    if (*size && static_cast<int64_t>(**size) != params.size_bytes && !growing) {
      return Status::AlreadyExists("name " + QuoteField(params.name) + ": volume exists with " +
                                   std::to_string(**size) + " bytes, " + std::to_string(params.size_bytes) +
                                   " requested");
    }
    // A reservation whose image a crash kept from being made (or finished)
    // gets it now: every step carries on from where it stopped. A made
    // image's encryption may be what a crash kept from being finished.
    if (!*size || growing || source->kind == ContentSource::Kind::kVolume) {
      NBDK_RETURN_IF_ERROR(RunRbdSteps(steps));
    } else {
      NBDK_RETURN_IF_ERROR(RunRbdSteps(encryption_steps));
    }
  } else {
    size_t ran = 0;
    Status made = RunRbdSteps(steps, &ran);
    if (!made.ok()) {
      // An empty volume's first step is its exclusive rbd_create: when that
      // fails this call made nothing, and an image of the name is another's.
      bool made_nothing = source->kind == ContentSource::Kind::kNone && ran == 0;
      bool cloned_volume = source->kind == ContentSource::Kind::kVolume;
      if (made_nothing ||
          DiscardVolumeImage(cluster, *image_io, reservation.image_name, cloned_volume, &*source).ok()) {
        (void)journal.Undo(params.name, reservation.uuid);
      }
      return made;
    }
  }
  // After the image, on every call: a retry writes what a crash kept from
  // being written.
  NBDK_RETURN_IF_ERROR(SetImageMetadata(*image_io, reservation.image_name, params.metadata));
  NBDK_RETURN_IF_ERROR(SetImageMetadata(*image_io, reservation.image_name, params.qos_metadata));
  CreatedVolume out;
  out.volume_id = volume_id;
  out.size_bytes = params.size_bytes;
  out.context = VolumeContextFor(params, reservation.image_name);
  if (params.rados_namespace.empty() && !ns.empty()) out.context["radosNamespace"] = ns;
  return out;
}

Status DeleteVolumeBlocking(const std::shared_ptr<RadosCluster>& cluster, const VolumeRef& volume,
                            const std::string& ns) {
  auto found = FindVolume(cluster, volume, ns);
  if (!found.ok()) return found.status();
  if (!found->image_pool) return Status::Ok();
  IoCtx& io = *found->image_pool;
  const std::string& uuid = volume.decoded.object_uuid;
  // Without a journal entry the image can only be csi-vol-<uuid>: a delete
  // that crashed after the image went is retried harmlessly.
  std::string image = found->attributes ? found->attributes->image_name : DefaultImageName(uuid);
  auto watchers = ImageWatchers(io, image);
  if (!watchers.ok() && watchers.status().code() != Code::kNotFound) return watchers.status();
  if (watchers.ok() && !watchers->empty()) {
    return Status::FailedPrecondition("volume " + QuoteField(volume.volume_id) + ": image " + image + " in " +
                                      io.description() + " is in use by watcher " + watchers->front().ToString() +
                                      "; nothing deleted");
  }
  // A crash right after the temporary snapshot source@<image>-temp (before
  // or after its clone) leaves it on the source, which only csi.source
  // names: it goes with the rest.
  const bool cloned_volume = found->attributes && !found->attributes->source.empty();
  std::optional<ResolvedSource> source;
  if (cloned_volume) {
    auto recorded = RecordedSourceOf(cluster, found->attributes->source, ns);
    if (!recorded.ok()) return recorded.status().WithContext("volume " + QuoteField(volume.volume_id) + ": csi.source");
    source = std::move(*recorded);
  }
  // <image>-temp is this volume's temporary clone when the volume is a clone
  // of a volume (csi.source), or when its image has a name generated from
  // its uuid (ceph-csi's <prefix><uuid>, whose -temp only a clone makes);
  // an nbdkeeper.io/imageName's -temp may be another volume's image.
  const bool temporary_clone = cloned_volume || image.ends_with(uuid);
  // Snapshots and clones of the image keep it in the RBD trash until the
  // last of them is deleted (ceph/rbd_clone.h RemoveOrTrashImage).
  NBDK_RETURN_IF_ERROR(DiscardVolumeImage(cluster, io, image, temporary_clone, source ? &*source : nullptr));
  if (!found->attributes) return Status::Ok();

  RadosOmapStore volumes(io);
  std::optional<IoCtx> journal_io;
  int64_t journal_pool_id = volume.decoded.pool_id;
  if (found->attributes->journal_pool_id) {
    journal_pool_id = *found->attributes->journal_pool_id;
    auto jio = IoCtx::OpenById(cluster, journal_pool_id, ns);
    if (!jio.ok()) return jio.status().WithContext("volume " + QuoteField(volume.volume_id) + ": journal pool");
    journal_io.emplace(std::move(*jio));
  }
  RadosOmapStore directory(journal_io ? *journal_io : io);
  VolumeJournal journal(directory, volumes, {volume.decoded.pool_id, journal_pool_id}, kDefaultJournalInstance,
                        RandomUuid);
  return journal.Undo(found->attributes->request_name, uuid);
}

namespace {

// ceph-csi's AdjustQOS: the limits of a grown image computed again from
// the QoS parameters saved on it (by nbdkeeper or by ceph-csi). Saved
// values that are not numbers were not written by either: left alone.
Status AdjustQosLimits(IoCtx& io, const std::string& image, int64_t size_bytes) {
  VolumeParameters saved;
  for (const auto& [key, parameter] : SavedQosParameters()) {
    auto value = GetImageMetadata(io, image, key);
    if (!value.ok()) return value.status();
    if (*value) saved[parameter] = **value;
  }
  if (!CheckQosParameters(saved).ok()) return Status::Ok();
  return SetImageMetadata(io, image, QosImageMetadata(saved, size_bytes));
}

}  // namespace

Result<ExpandedVolume> ExpandVolumeBlocking(const std::shared_ptr<RadosCluster>& cluster, const VolumeRef& volume,
                                            int64_t size_bytes, const std::string& ns) {
  auto found = FindVolume(cluster, volume, ns);
  if (!found.ok()) return found.status();
  if (!found->attributes) return Status::NotFound("volume " + QuoteField(volume.volume_id) + ": not found");
  IoCtx& io = *found->image_pool;
  NBDK_RETURN_IF_ERROR(GrowImage(io, found->attributes->image_name, static_cast<uint64_t>(size_bytes)));
  auto size = ImageSize(io, found->attributes->image_name);
  if (!size.ok()) return size.status();
  if (!*size) return Status::NotFound("volume " + QuoteField(volume.volume_id) + ": image is gone");
  NBDK_RETURN_IF_ERROR(AdjustQosLimits(io, found->attributes->image_name, static_cast<int64_t>(**size)));
  return ExpandedVolume{static_cast<int64_t>(**size), IsBlockEncrypted(found->attributes->encryption)};
}

Status CheckVolumeExistsBlocking(const std::shared_ptr<RadosCluster>& cluster, const VolumeRef& volume,
                                 const std::string& ns) {
  auto found = FindVolume(cluster, volume, ns);
  if (!found.ok()) return found.status();
  if (!found->attributes) return Status::NotFound("volume " + QuoteField(volume.volume_id) + ": not found");
  auto size = ImageSize(*found->image_pool, found->attributes->image_name);
  if (!size.ok()) return size.status();
  if (!*size) {
    return Status::NotFound("volume " + QuoteField(volume.volume_id) + ": image " + found->attributes->image_name +
                            " not found");
  }
  return Status::Ok();
}

}  // namespace nbdk
