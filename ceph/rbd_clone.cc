#include "ceph/rbd_clone.h"

#include <rbd/librbd.h>

#include <cerrno>
#include <ctime>
#include <vector>

#include "ceph/rbd_image.h"

namespace nbdk {
namespace {

// A parent chain longer than this is a loop or corruption, not a chain.
constexpr int kMaxChainWalk = 64;

// librbd's answers for "something still depends on this image".
bool HasDependents(int rc) { return rc == -ENOTEMPTY || rc == -EBUSY || rc == -EMLINK || rc == -ECHILD; }

Result<ImageInfo> StatOpen(IoCtx& io, rbd_image_t image, const std::string& name) {
  ImageInfo out;
  auto fail = [&](int rc) { return StatusFromRados(rc, ImageWhat(io, "stat", name)); };
  int rc = io.cluster().NoteResult(rbd_get_size(image, &out.size_bytes));
  if (rc < 0) return fail(rc);
  rc = io.cluster().NoteResult(rbd_get_features(image, &out.features));
  if (rc < 0) return fail(rc);
  struct timespec created {};
  rc = io.cluster().NoteResult(rbd_get_create_timestamp(image, &created));
  if (rc < 0) return fail(rc);
  out.created_s = created.tv_sec;
  out.created_ns = static_cast<int32_t>(created.tv_nsec);
  rbd_linked_image_spec_t parent{};
  rbd_snap_spec_t snap{};
  rc = io.cluster().NoteResult(rbd_get_parent(image, &parent, &snap));
  if (rc == -ENOENT) return out;
  if (rc < 0) return fail(rc);
  out.parent =
      ParentSpec{parent.pool_id, parent.pool_namespace ? parent.pool_namespace : "",
                 parent.image_id ? parent.image_id : "", parent.image_name ? parent.image_name : "", parent.trash};
  rbd_linked_image_spec_cleanup(&parent);
  rbd_snap_spec_cleanup(&snap);
  return out;
}

// Opens an ancestor by id (it may be in the trash) and stats it.
Result<ImageInfo> StatParent(const std::shared_ptr<RadosCluster>& cluster, const ParentSpec& parent) {
  auto io = IoCtx::OpenById(cluster, parent.pool_id, parent.pool_namespace);
  if (!io.ok()) return io.status().WithContext("parent image " + parent.image_name);
  auto image = OpenImage(*io, parent.image_id, true, "stat parent", true);
  if (!image.ok()) return image.status();
  return StatOpen(*io, image->get(), parent.image_name);
}

}  // namespace

Result<std::string> DataPoolOf(IoCtx& io, const std::string& image) {
  auto opened = OpenImage(io, image, true, "read the data pool of");
  if (!opened.ok()) return opened.status();
  int64_t id = rbd_get_data_pool_id(opened->get());
  if (id < 0) {
    int rc = io.cluster().NoteResult(static_cast<int>(id));
    return StatusFromRados(rc, ImageWhat(io, "read the data pool of", image));
  }
  if (id == rados_ioctx_get_id(io.get())) return std::string();
  return io.cluster().PoolName(id);
}

Result<ImageInfo> StatImage(IoCtx& io, const std::string& image) {
  auto opened = OpenImage(io, image, true, "stat");
  if (!opened.ok()) return opened.status();
  return StatOpen(io, opened->get(), image);
}

Status CreateSnapshot(IoCtx& io, const std::string& image, const std::string& snap) {
  auto opened = OpenImage(io, image, false, "snapshot");
  if (!opened.ok()) return opened.status();
  int rc = io.cluster().NoteResult(rbd_snap_create(opened->get(), snap.c_str()));
  if (rc < 0 && rc != -EEXIST) return StatusFromRados(rc, ImageWhat(io, "snapshot", image) + " as " + snap);
  return Status::Ok();
}

Status RemoveSnapshot(IoCtx& io, const std::string& image, const std::string& snap) {
  auto opened = OpenImage(io, image, false, "remove snapshot of");
  if (!opened.ok()) return opened.status().code() == Code::kNotFound ? Status::Ok() : opened.status();
  int rc = io.cluster().NoteResult(rbd_snap_remove(opened->get(), snap.c_str()));
  if (rc < 0 && rc != -ENOENT) return StatusFromRados(rc, ImageWhat(io, "remove snapshot of", image) + ": " + snap);
  return Status::Ok();
}

Result<bool> SnapshotExists(IoCtx& io, const std::string& image, const std::string& snap) {
  auto opened = OpenImage(io, image, true, "list snapshots of");
  if (!opened.ok()) return opened.status();
  bool exists = false;
  int rc = io.cluster().NoteResult(rbd_snap_exists(opened->get(), snap.c_str(), &exists));
  if (rc < 0) return StatusFromRados(rc, ImageWhat(io, "list snapshots of", image));
  return exists;
}

Status CloneImage(IoCtx& parent_io, const std::string& parent, const std::string& snap, IoCtx& child_io,
                  const std::string& child, const ImageCreateOptions& options) {
  auto existing = StatImage(child_io, child);
  if (existing.ok()) return Status::Ok();
  if (existing.status().code() != Code::kNotFound) return existing.status();
  ImageCreateOptions layout = options;
  if (layout.data_pool.empty()) {
    // librbd would put the clone's data in its own pool.
    auto data_pool = DataPoolOf(parent_io, parent);
    if (!data_pool.ok()) return data_pool.status();
    layout.data_pool = std::move(*data_pool);
  }
  RbdImageOptions opts = ToRbdImageOptions(layout);
  // Format 2: the parent snapshot needs no protection and may be removed
  // while clones use it; ceph-csi's whole design rests on that.
  rbd_image_options_set_uint64(opts.get(), RBD_IMAGE_OPTION_CLONE_FORMAT, 2);
  int rc = child_io.cluster().NoteResult(
      rbd_clone3(parent_io.get(), parent.c_str(), snap.c_str(), child_io.get(), child.c_str(), opts.get()));
  if (rc == -EEXIST) return Status::Ok();
  if (rc == -ENOENT) {
    // parent@snap is missing: fine when `child` exists (see the header).
    auto existing = StatImage(child_io, child);
    if (existing.ok()) return Status::Ok();
    if (existing.status().code() != Code::kNotFound) return existing.status();
  }
  if (rc < 0) {
    return ImageCreateFailure(child_io, "clone", child, layout.features, rc)
        .WithContext("from " + parent + "@" + snap + " in " + parent_io.description());
  }
  return Status::Ok();
}

Status CreateSnapshotForClone(IoCtx& parent_io, const std::string& parent, const std::string& snap, IoCtx& child_io,
                              const std::string& child) {
  auto existing = StatImage(child_io, child);
  if (existing.ok()) return Status::Ok();
  if (existing.status().code() != Code::kNotFound) return existing.status();
  return CreateSnapshot(parent_io, parent, snap);
}

Result<int> CloneDepth(const std::shared_ptr<RadosCluster>& cluster, IoCtx& io, const std::string& image) {
  auto info = StatImage(io, image);
  if (!info.ok()) return info.status();
  int depth = 0;
  for (std::optional<ParentSpec> parent = info->parent; parent; ++depth) {
    if (depth == kMaxChainWalk) return Status::Corruption(ImageWhat(io, "walk the parents of", image) + ": no end");
    auto up = StatParent(cluster, *parent);
    if (!up.ok()) return up.status();
    parent = up->parent;
  }
  return depth;
}

Result<bool> FlattenIfDeeper(const std::shared_ptr<RadosCluster>& cluster, IoCtx& io, const std::string& image,
                             int limit) {
  auto depth = CloneDepth(cluster, io, image);
  if (!depth.ok()) return depth.status();
  if (*depth < limit) return false;
  auto opened = OpenImage(io, image, false, "flatten");
  if (!opened.ok()) return opened.status();
  int rc = io.cluster().NoteResult(rbd_flatten(opened->get()));
  if (rc < 0 && rc != -EINVAL) return StatusFromRados(rc, ImageWhat(io, "flatten", image));
  return true;
}

Status RemoveOrTrashImage(const std::shared_ptr<RadosCluster>& cluster, IoCtx& io, const std::string& image) {
  auto info = StatImage(io, image);
  if (!info.ok()) return info.status().code() == Code::kNotFound ? Status::Ok() : info.status();
  int rc = io.cluster().NoteResult(rbd_remove(io.get(), image.c_str()));
  if (rc == 0) return ReapTrashedAncestors(cluster, info->parent);
  if (rc == -ENOENT) return Status::Ok();
  if (!HasDependents(rc)) return StatusFromRados(rc, ImageWhat(io, "remove", image));
  // EBUSY is also librbd's answer for an image in use: never trash that.
  auto watchers = ImageWatchers(io, image);
  if (!watchers.ok()) return watchers.status().code() == Code::kNotFound ? Status::Ok() : watchers.status();
  if (!watchers->empty()) {
    return Status::FailedPrecondition(ImageWhat(io, "remove", image) + ": in use by watcher " +
                                      watchers->front().ToString());
  }
  rc = io.cluster().NoteResult(rbd_trash_move(io.get(), image.c_str(), 0));
  if (rc < 0 && rc != -ENOENT) return StatusFromRados(rc, ImageWhat(io, "move to the trash", image));
  return Status::Ok();
}

Status ReapTrashedAncestors(const std::shared_ptr<RadosCluster>& cluster, std::optional<ParentSpec> parent) {
  for (int walked = 0; parent && parent->in_trash && walked < kMaxChainWalk; ++walked) {
    auto info = StatParent(cluster, *parent);
    if (!info.ok()) return info.status().code() == Code::kNotFound ? Status::Ok() : info.status();
    auto io = IoCtx::OpenById(cluster, parent->pool_id, parent->pool_namespace);
    if (!io.ok()) return io.status();
    int rc = io->cluster().NoteResult(rbd_trash_remove(io->get(), parent->image_id.c_str(), false));
    // Still depended on (another snapshot or clone), or already gone.
    if (HasDependents(rc) || rc == -ENOENT) return Status::Ok();
    if (rc < 0) return StatusFromRados(rc, ImageWhat(*io, "remove from the trash", parent->image_name));
    parent = info->parent;
  }
  return Status::Ok();
}

}  // namespace nbdk
