// The librbd snapshot, clone, flatten and trash operations behind CSI
// snapshots and clones (ceph-csi's RBD design,
// docs/design/controller-layout.md); when to use them is the Controller's
// (csi/controller/clone_operations.h).
// Every function is BLOCKING (run it in EventLoop::RunBlocking) and
// idempotent: a retry after a crash between any two calls finds what the
// first attempt did and carries on.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "ceph/rados_cluster.h"
#include "ceph/rbd_image.h"

namespace nbdk {

// Where an image's parent is: pool, namespace, id (names change when an
// image goes to the trash, ids do not).
struct ParentSpec {
  int64_t pool_id = 0;
  std::string pool_namespace;
  std::string image_id;
  std::string image_name;
  bool in_trash = false;
};

struct ImageInfo {
  uint64_t size_bytes = 0;
  uint64_t features = 0;
  int64_t created_s = 0;  // creation time, seconds since the epoch
  int32_t created_ns = 0;
  std::optional<ParentSpec> parent;
};

// Size, features, creation time and parent of `image`; NotFound when there
// is no such image.
Result<ImageInfo> StatImage(IoCtx& io, const std::string& image);

// Creates the user snapshot image@snap; an existing one is success.
// NotFound when the image is missing.
Status CreateSnapshot(IoCtx& io, const std::string& image, const std::string& snap);

// Removes the user snapshot image@snap; a missing image or snapshot is
// success. A snapshot with clones goes to librbd's trash namespace (clone
// format 2), where it lives until its last clone is gone.
Status RemoveSnapshot(IoCtx& io, const std::string& image, const std::string& snap);

// Whether the user snapshot image@snap exists; NotFound when the image is
// missing.
Result<bool> SnapshotExists(IoCtx& io, const std::string& image, const std::string& snap);

// The pool of `image`'s data objects when it has a data pool (rbd create
// --data-pool), "" when its data is in its own pool. NotFound when there is
// no such image.
Result<std::string> DataPoolOf(IoCtx& io, const std::string& image);

// Clones parent@snap into `child` (clone format 2) laid out by `options`:
// its features; its data pool, or, when empty, the parent's (DataPoolOf:
// librbd would otherwise put a clone's data in the clone's own pool); its
// object size and striping, librbd's defaults for a clone when 0 (the
// parent's object size). An existing `child` is success, also when
// parent@snap is gone: only reserved names are cloned into, so it is this
// clone, made by an earlier attempt (which may have removed parent@snap
// since). Features librbd or the cluster cannot make are InvalidArgument
// (ceph/rbd_image.h ImageCreateFailure).
Status CloneImage(IoCtx& parent_io, const std::string& parent, const std::string& snap, IoCtx& child_io,
                  const std::string& child, const ImageCreateOptions& options);

// The first of ceph-csi's three steps "snapshot parent@snap, clone it into
// `child` (CloneImage), remove parent@snap (RemoveSnapshot)": creates
// parent@snap unless `child` exists (an earlier attempt got further).
Status CreateSnapshotForClone(IoCtx& parent_io, const std::string& parent, const std::string& snap, IoCtx& child_io,
                              const std::string& child);

// The number of ancestors of `image` (0: no parent), following parents into
// other pools and into the trash.
Result<int> CloneDepth(const std::shared_ptr<RadosCluster>& cluster, IoCtx& io, const std::string& image);

// Flattens `image` when its clone depth is at least `limit`: it then reads
// nothing from its ancestors. Returns whether it flattened.
Result<bool> FlattenIfDeeper(const std::shared_ptr<RadosCluster>& cluster, IoCtx& io, const std::string& image,
                             int limit);

// Removes `image`. When snapshots or clones still depend on it (librbd
// refuses with ENOTEMPTY, EBUSY or EMLINK), moves it to the RBD trash
// instead, as ceph-csi does, where it serves its dependents until the last
// is gone (ReapTrashedAncestors). A missing image is success. Then reaps
// the removed image's trashed ancestors.
Status RemoveOrTrashImage(const std::shared_ptr<RadosCluster>& cluster, IoCtx& io, const std::string& image);

// Walks up from `parent`: each ancestor in the trash that nothing depends on
// any more is removed from the trash; stops at the first that is not in
// the trash or still has dependents.
Status ReapTrashedAncestors(const std::shared_ptr<RadosCluster>& cluster, std::optional<ParentSpec> parent);

}  // namespace nbdk
