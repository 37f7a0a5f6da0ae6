#include "csi/node/stage_rules.h"

#include <algorithm>

namespace nbdk {
namespace {

bool SameCluster(const VolumeRecord& r, const ResolvedImage& resolved) {
  if (r.cluster_id == resolved.cluster_id) return true;
  for (const std::string& m : resolved.image.monitors) {
    if (std::find(r.monitors.begin(), r.monitors.end(), m) != r.monitors.end()) return true;
  }
  return false;
}

}  // namespace

Status CheckRestage(const VolumeRecord& r, const StageRequest& req) {
  if (r.staging_path != req.staging_target_path) {
    return Status::AlreadyExists("volume " + req.volume_id + " is already staged at " + r.staging_path);
  }
  if (r.snap != req.snapshot || (!req.image_name.empty() && r.image != req.image_name)) {
    return Status::AlreadyExists("volume " + req.volume_id + " is already staged for image " + RecordedImage(r).Spec());
  }
  if (r.block != req.capability.block || r.fs_type != req.capability.fs_type ||
      r.read_only != req.capability.read_only) {
    return Status::AlreadyExists("volume " + req.volume_id + " is already staged with another capability (" +
                                 (r.block ? "block" : r.fs_type) + (r.read_only ? ", read-only" : "") + ")");
  }
  return Status::Ok();
}

Status CheckImageNotStaged(const StagedVolumes& volumes, const std::string& volume_id, const ResolvedImage& resolved) {
  const ImageSpec& image = resolved.image;
  for (const VolumeRecord& r : volumes.All()) {
    if (r.volume_id != volume_id && r.pool == image.pool && r.rados_namespace == image.rados_namespace &&
        r.image == image.image && r.snap == image.snap && SameCluster(r, resolved)) {
      return Status::FailedPrecondition("image " + image.Spec() + " is already staged on this node as volume " +
                                        r.volume_id);
    }
  }
  return Status::Ok();
}

}  // namespace nbdk
