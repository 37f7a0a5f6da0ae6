// NodePublishVolume and NodeUnpublishVolume (csi/node/volume_operations.h).
#include <algorithm>
#include <memory>

#include "csi/node/confined_path.h"
#include "csi/node/volume_operations.h"

namespace nbdk {
namespace {

constexpr const char* kTargetField = "target_path";

VolumeRecord Without(VolumeRecord record, const std::string& target) {
  auto& targets = record.published_targets;
  targets.erase(
      std::remove_if(targets.begin(), targets.end(), [&](const PublishedTarget& t) { return t.path == target; }),
      targets.end());
  return record;
}

// Undoes a publish that did not complete: the journal entry, then the mount
// point if this publish made it. `error` is what the caller gets.
void AbandonPublish(NodeContext& node, const VolumeRecord& before, const PublishedTarget& target, Status error,
                    std::shared_ptr<VolumeOpLock> held, std::function<void(Status)> done) {
  NodeContext* n = &node;
  node.volumes.Put(before, [n, target, error, held, done](Status s) {
    if (!s.ok()) return done(error);  // the target stays journaled: unpublish cleans it up
    if (!target.created) return done(error);
    n->host.RemoveMountPoint(n->options.path_roots, target.path, kTargetField,
                             [error, held, done](Status) { done(error); });
  });
}

// The target made and journaled, then the bind mount (publish's last steps).
void BindAtNewTarget(NodeContext& node, const PublishRequest& request, const VolumeRecord& before,
                     const std::string& source, bool single_writer, const std::shared_ptr<VolumeOpLock>& held,
                     const std::function<void(Status)>& done) {
  NodeContext* n = &node;
  node.host.CreateMountPoint(node.options.path_roots, request.target_path, before.block, kTargetField,
                             [n, request, before, source, single_writer, held, done](Result<bool> created) {
                               if (!created.ok()) return done(created.status());
                               PublishedTarget target{request.target_path, request.read_only, *created,
                                                      request.capability.mount_options, single_writer};
                               VolumeRecord after = before;
                               after.published_targets.push_back(target);
                               // Journaled before the mount: a crash in between leaves an entry that
                               // unpublish cleans up, never a mount nobody knows about.
                               n->volumes.Put(after, [n, request, before, target, source, held, done](Status s) {
                                 if (!s.ok())
                                   return AbandonPublish(*n, before, target, s.WithContext("node journal"), held, done);
                                 n->host.BindMount(source, target.path, target.read_only, target.mount_flags,
                                                   [n, before, target, held, done](Status s) {
                                                     if (!s.ok())
                                                       return AbandonPublish(*n, before, target, s, held, done);
                                                     done(Status::Ok());
                                                   });
                               });
                             });
}

}  // namespace

void PublishVolume(NodeContext& node, PublishRequest request, VolumeOpLock lock, std::function<void(Status)> done) {
  NBDK_CHECK_LOOP_THREAD(node.loop);
  const VolumeRecord* found = node.volumes.Find(request.volume_id);
  if (found == nullptr || found->state != VolumeState::kStaged) {
    return done(Status::FailedPrecondition("volume " + request.volume_id + " is not staged on this node"));
  }
  if (found->staging_path != request.staging_target_path) {
    return done(Status::FailedPrecondition("volume " + request.volume_id + " is staged at " + found->staging_path +
                                           ", not " + request.staging_target_path));
  }
  if (found->block != request.capability.block) {
    return done(Status::FailedPrecondition("volume " + request.volume_id + " is staged as " +
                                           (found->block ? "block" : "filesystem") +
                                           ", the publish asks for the other access type"));
  }
  for (const PublishedTarget& t : found->published_targets) {
    if (t.path != request.target_path) continue;
    if (t.read_only == request.read_only) return done(Status::Ok());
    return done(Status::AlreadyExists("volume " + request.volume_id + " is already published at " + t.path +
                                      (t.read_only ? " read-only" : " read-write")));
  }
  // SINGLE_NODE_SINGLE_WRITER is one workload at a time (Kubernetes'
  // ReadWriteOncePod): a second target is refused, as the spec asks - also
  // when the second asks for another mode, so the journal keeps the mode.
  const bool single_writer =
      request.capability.access_mode == csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_SINGLE_WRITER;
  for (const PublishedTarget& t : found->published_targets) {
    if (!single_writer && !t.single_writer) continue;
    const char* why = t.single_writer ? " was published SINGLE_NODE_SINGLE_WRITER at "
                                      : " is asked for SINGLE_NODE_SINGLE_WRITER but is published at ";
    return done(Status::FailedPrecondition("volume " + request.volume_id + why + t.path));
  }
  VolumeRecord before = *found;
  std::string source = found->block ? StagedDevice(*found) : StagedMountPoint(found->staging_path, found->volume_id);
  auto held = std::make_shared<VolumeOpLock>(std::move(lock));
  NodeContext* n = &node;
  // The device under what is bound must still be the volume's: a fenced or
  // expired one was released, and its index may serve another volume.
  node.supervisor.CheckDevice(
      request.volume_id, [n, request, before, source, single_writer, held, done](Result<std::string> device) {
        if (!device.ok())
          return done(device.status().WithContext("volume " + request.volume_id + " cannot be published"));
        if (*device != before.nbd_device) {
          return done(Status::FailedPrecondition("volume " + request.volume_id + " was staged on " + before.nbd_device +
                                                 " but is mapped on " + *device));
        }
        BindAtNewTarget(*n, request, before, source, single_writer, held, done);
      });
}

void UnpublishVolume(NodeContext& node, UnpublishRequest request, VolumeOpLock lock, std::function<void(Status)> done) {
  NBDK_CHECK_LOOP_THREAD(node.loop);
  const VolumeRecord* found = node.volumes.Find(request.volume_id);
  if (found == nullptr) return done(Status::Ok());
  auto it = std::find_if(found->published_targets.begin(), found->published_targets.end(),
                         [&](const PublishedTarget& t) { return t.path == request.target_path; });
  // Not a target this daemon journaled: not ours to unmount or remove.
  if (it == found->published_targets.end()) return done(Status::Ok());
  PublishedTarget target = *it;
  VolumeRecord after = Without(*found, target.path);
  auto held = std::make_shared<VolumeOpLock>(std::move(lock));
  NodeContext* n = &node;
  auto forget = [n, after, held, done](Status s) {
    if (!s.ok()) return done(s);
    n->volumes.Put(after, [held, done](Status s) { done(s.WithContext("node journal")); });
  };
  RunBlockingResult<PathKind>(
      node.loop, [roots = node.options.path_roots, t = target.path] { return InspectBeneath(roots, t, kTargetField); },
      [n, target, forget](Result<PathKind> kind) {
        if (!kind.ok()) return forget(kind.status());
        if (*kind == PathKind::kMissing) return forget(Status::Ok());
        n->host.Unmount(target.path, [n, target, forget](Status s) {
          if (!s.ok() || !target.created) return forget(s);
          n->host.RemoveMountPoint(n->options.path_roots, target.path, kTargetField, forget);
        });
      });
}

}  // namespace nbdk
