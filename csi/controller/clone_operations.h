// CreateVolume's content sources, BLOCKING (see csi/controller/controller_operations.h):
// a volume restored from a snapshot or cloned from a volume, made the way
// ceph-csi makes it so that either driver can take over
// (docs/design/controller-layout.md):
//
//  - from a snapshot: csi-snap-<uuid>@csi-snap-<uuid> is cloned into the
//    new image (format 2), after flattening csi-snap-<uuid> when its clone
//    chain would otherwise reach kHardMaxCloneDepth;
//  - from a volume: source@<image>-temp -> clone <image>-temp (layering,
//    deep-flatten) -> remove source@<image>-temp; <image>-temp@<image> ->
//    clone <image> -> remove <image>-temp@<image>. The temporary clone
//    stays as the new image's parent; DeleteVolume removes it.
//
// An encrypted volume's steps (csi/controller/volume_encryption.h) come
// after the image is made or cloned. Then the image grows to the requested
// size (larger than the source is allowed; smaller is OUT_OF_RANGE, found
// before anything is reserved).
// Every step of a restore or clone (VolumeImageSteps) is idempotent, so a
// CreateVolume retried after a crash rolls the creation forward; an empty
// volume's rbd_create is exclusive (csi/controller/rbd_steps.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "ceph/rados_cluster.h"
#include "ceph/rbd_image.h"
#include "csi/controller/controller_request.h"
#include "csi/controller/omap_volume_journal.h"
#include "csi/controller/rbd_steps.h"

namespace nbdk {

// ceph-csi's defaults (--rbdhardmaxclonedepth): an image whose parent chain
// is this long is flattened before it gets another child.
inline constexpr int kHardMaxCloneDepth = 8;

// The source of a new volume, found before the volume is reserved.
struct ResolvedSource {
  ContentSource::Kind kind = ContentSource::Kind::kNone;
  std::optional<IoCtx> io;  // the source image's pool
  std::string image;        // csi-snap-<uuid>, or the source volume's image
  uint64_t size_bytes = 0;
  JournalEncryption encryption;  // as the source's journal records it
};

// NotFound when the snapshot or volume does not exist (or a snapshot is
// only half made); OutOfRange when `size_bytes` is smaller than the source.
Result<ResolvedSource> ResolveContentSource(const std::shared_ptr<RadosCluster>& cluster, const ContentSource& source,
                                            int64_t size_bytes, const std::string& rados_namespace);

// The RBD steps that make `image` in `io` from `source`, `size_bytes`
// large (csi/controller/rbd_steps.h): kNone, create (a new empty image),
// then `encryption`; a snapshot, flatten if deep, clone, `encryption`,
// grow; a volume, flatten if deep, twice the three of
// AppendCloneThroughTemporarySnapshot, `encryption`, grow. `io` and
// `source.io` must outlive the steps.
std::vector<RbdStep> VolumeImageSteps(const std::shared_ptr<RadosCluster>& cluster, IoCtx& io, const std::string& image,
                                      const CreateVolumeParams& params, ResolvedSource& source,
                                      const std::vector<RbdStep>& encryption);

// ceph-csi's "snapshot parent@snap, clone it into `child`, remove
// parent@snap" (it stays in librbd's trash namespace while `child` needs
// it) as three steps (ceph/rbd_clone.h), appended to `steps`; the
// snapshot and the clone are skipped once `child` exists; `child` is laid
// out by `layout` (CloneImage: an empty data pool is the parent's). The
// IoCtxs must outlive the steps.
void AppendCloneThroughTemporarySnapshot(std::vector<RbdStep>& steps, IoCtx& parent_io, const std::string& parent,
                                         const std::string& snap, IoCtx& child_io, const std::string& child,
                                         const ImageCreateOptions& layout);

// The step "flatten `image` when its clone depth is at least `limit`"
// (FlattenIfDeeper). `io` must outlive the step.
RbdStep FlattenStep(const std::shared_ptr<RadosCluster>& cluster, IoCtx& io, const std::string& image, int limit);

// Removes `image` and, with `temporary_clone`, its temporary clone, with
// the snapshots that tie them together; images something still depends on
// go to the RBD trash instead. Only a clone of a volume has a temporary
// clone: otherwise an image named <image>-temp is another volume's. `source`
// (may be null): the volume a failed clone came from, whose temporary
// snapshot is removed too.
Status DiscardVolumeImage(const std::shared_ptr<RadosCluster>& cluster, IoCtx& io, const std::string& image,
                          bool temporary_clone, ResolvedSource* source);

// What the volume journal records as csi.source for a new volume from
// `source`: a volume's ID when cloning a volume (DeleteVolume needs it to
// find a temporary snapshot a crash left on the source), else "".
std::string RecordedSource(const ContentSource& source);

// The source volume that RecordedSource recorded; nullopt when that volume
// or its image no longer exists (or the value is not a volume ID).
Result<std::optional<ResolvedSource>> RecordedSourceOf(const std::shared_ptr<RadosCluster>& cluster,
                                                       const std::string& recorded, const std::string& rados_namespace);

// "<image>-temp": ceph-csi's name of a cloned volume's temporary clone.
std::string TemporaryCloneName(const std::string& image);

}  // namespace nbdk
