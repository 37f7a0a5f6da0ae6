#include "csi/stage_transaction.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <vector>

#include "csi/confined_path.h"
#include "csi/filesystem.h"
#include "csi/key_file.h"
#include "csi/stage_leftovers.h"
#include "csi/stash.h"
#include "daemon/base/log.h"

namespace nbdk {
namespace {

class StageTransaction : public std::enable_shared_from_this<StageTransaction> {
 public:
  StageTransaction(NodeContext& node, StageRequest request, VolumeOpLock lock, std::function<void(Status)> done)
      : node_(node), req_(std::move(request)), lock_(std::move(lock)), done_(std::move(done)) {
    mount_point_ = StagedMountPoint(req_.staging_target_path, req_.volume_id);
  }

  void Start() {
    const VolumeRecord* existing = node_.volumes.Find(req_.volume_id);
    // Staged in this boot: idempotent. Staged before a reboot: nothing of it
    // is mapped or mounted any more, so it stages anew (ReleaseLeftovers
    // finds nothing to release).
    if (existing != nullptr && existing->state == kStaged && existing->boot_id == node_.options.boot_id) {
      return Finish(CheckRestage(*existing));
    }
    auto self = shared_from_this();
    RunBlockingResult<PathKind>(
        node_.loop,
        [roots = node_.options.path_roots, path = req_.staging_target_path] {
          return InspectBeneath(roots, path, "staging_target_path");
        },
        [self](Result<PathKind> kind) {
          if (!kind.ok()) return self->Finish(kind.status());
          if (*kind != PathKind::kDirectory) {
            return self->Finish(Status::FailedPrecondition("staging_target_path '" +
                                                           self->req_.staging_target_path +
                                                           "' is not an existing directory"));
          }
          self->ReleaseLeftovers();
        });
  }

 private:
  // Undo steps capture a raw pointer: RunUndo() keeps the transaction
  // alive while they run, and a shared_ptr here would be a cycle. Each
  // reports its Status: a failed one stops the undo (unmapping under a
  // mount that would not come off would be worse than a leftover).
  using Undo = std::function<void(std::function<void(Status)> next)>;

  Status CheckRestage(const VolumeRecord& r) const {
    if (r.staging_path != req_.staging_target_path) {
      return Status::AlreadyExists("volume " + req_.volume_id + " is already staged at " + r.staging_path);
    }
    if (r.block != req_.capability.block || r.fs_type != req_.capability.fs_type ||
        r.read_only != req_.capability.read_only) {
      return Status::AlreadyExists("volume " + req_.volume_id + " is already staged with another capability (" +
                                   (r.block ? "block" : r.fs_type) + (r.read_only ? ", read-only" : "") + ")");
    }
    return Status::Ok();
  }

  // Each step either calls the next or Fail().
  void ReleaseLeftovers() {
    const VolumeRecord* unfinished = node_.volumes.Find(req_.volume_id);
    if (unfinished == nullptr) return WriteKey();
    auto self = shared_from_this();
    ReleaseStageLeftovers(node_, *unfinished, [self](Status s) {
      if (!s.ok()) return self->Finish(s.WithContext("release what an unfinished stage left"));
      self->WriteKey();
    });
  }

  void WriteKey() {
    auto self = shared_from_this();
    auto path = std::make_shared<Result<std::string>>(Status::Internal("not written"));
    node_.loop.RunBlocking(
        [path, dir = node_.options.key_dir, id = req_.volume_id, key = req_.user_key] {
          *path = WriteKeyFile(dir, id, key);
        },
        [self, path] {
          if (!path->ok()) return self->Fail(path->status());
          self->keyfile_ = **path;
          self->undo_.push_back([t = self.get()](std::function<void(Status)> next) {
            RunBlockingStatus(t->node_.loop, [p = t->keyfile_] { return RemoveKeyFile(p); },
                              next);
          });
          self->Resolve();
        });
  }

  void Resolve() {
    auto self = shared_from_this();
    ResolveImage(node_.loop, node_.rados, node_.options.resolve, req_, keyfile_, [self](Result<ResolvedImage> r) {
      if (!r.ok()) return self->Fail(r.status());
      self->resolved_ = std::move(*r);
      if (Status s = self->CheckImageNotMapped(); !s.ok()) return self->Fail(s);
      self->JournalStaging();
    });
  }

  // One mapping per image per node: two volume IDs naming one image would
  // map it read-write twice, and a lock break for one could fence the other.
  // Two cluster IDs may name one cluster: a shared monitor counts as same.
  bool SameCluster(const VolumeRecord& r) const {
    if (r.cluster_id == resolved_.cluster_id) return true;
    for (const std::string& m : resolved_.image.monitors) {
      if (std::find(r.monitors.begin(), r.monitors.end(), m) != r.monitors.end()) return true;
    }
    return false;
  }

  Status CheckImageNotMapped() const {
    const ImageSpec& image = resolved_.image;
    for (const VolumeRecord& r : node_.volumes.All()) {
      if (r.volume_id != req_.volume_id && r.pool == image.pool && r.rados_namespace == image.rados_namespace &&
          r.image == image.image && SameCluster(r)) {
        return Status::FailedPrecondition("image " + image.Path() + " is already staged on this node as volume " +
                                          r.volume_id);
      }
    }
    return Status::Ok();
  }

  VolumeRecord Record(const std::string& state) const {
    VolumeRecord r;
    if (const VolumeRecord* old = node_.volumes.Find(req_.volume_id)) {
      r = *old;
      // Targets of an earlier boot or attempt are not mounted now.
      if (old->boot_id != node_.options.boot_id) r.published_targets.clear();
    }
    const ImageSpec& image = resolved_.image;
    r.volume_id = req_.volume_id;
    r.cluster_id = resolved_.cluster_id;
    r.monitors = image.monitors;
    r.pool = image.pool;
    r.rados_namespace = image.rados_namespace;
    r.image = image.image;
    r.user_id = image.user_id;
    r.keyfile_path = keyfile_;
    r.ceph_conf_path = image.ceph_conf;
    r.nbd_device = device_;
    r.cookie = req_.volume_id;
    r.map_options = req_.map_options;
    r.fs_type = req_.capability.fs_type;
    r.block = req_.capability.block;
    r.read_only = req_.capability.read_only;
    r.mount_flags = req_.capability.mount_options;
    r.staging_path = req_.staging_target_path;
    r.mount_point_created = mount_point_created_;
    r.boot_id = node_.options.boot_id;
    r.reattach_timeout_s = node_.supervisor.config().reattach_timeout_s;
    auto snap = node_.supervisor.Snapshot(req_.volume_id);
    r.rbd_nbd_pid = snap ? snap->pid : 0;
    r.state = state;
    return r;
  }

  void JournalStaging() {
    auto self = shared_from_this();
    node_.volumes.Put(Record(std::string(kStaging)), [self](Status s) {
      if (!s.ok()) return self->Fail(s.WithContext("node journal"));
      self->undo_.push_back([t = self.get()](std::function<void(Status)> next) {
        t->node_.volumes.Remove(t->req_.volume_id, next);
      });
      self->Stash();
    });
  }

  ImageMetaStash StashContent() const {
    ImageMetaStash st;
    st.pool = resolved_.image.pool;
    st.rados_namespace = resolved_.image.rados_namespace;
    st.image = resolved_.image.image;
    st.unmap_options = req_.unmap_options_csv;
    st.device = device_;
    st.cluster_id = resolved_.cluster_id;
    st.cookie = req_.volume_id;
    return st;
  }

  void Stash() {
    auto self = shared_from_this();
    RunBlockingStatus(
        node_.loop, [path = req_.staging_target_path, st = StashContent()] { return WriteStash(path, st); },
        [self](Status s) {
          if (!s.ok()) return self->Fail(s);
          self->undo_.push_back([t = self.get()](std::function<void(Status)> next) {
            RunBlockingStatus(t->node_.loop, [p = t->req_.staging_target_path] { return RemoveStash(p); },
                              next);
          });
          self->Map();
        });
  }

  void Map() {
    MapRequest m;
    m.volume_id = req_.volume_id;
    m.image = resolved_.image;
    m.read_only = req_.capability.read_only;
    m.map_options = req_.map_options;
    m.cookie = req_.volume_id;
    auto self = shared_from_this();
    node_.supervisor.Map(std::move(m), [self](Result<std::string> device) {
      if (!device.ok()) return self->Fail(device.status());
      self->device_ = *device;
      self->undo_.push_back([t = self.get()](std::function<void(Status)> next) {
        t->node_.supervisor.Unmap(t->req_.volume_id, next);
      });
      self->MakeMountPoint();
    });
  }

  void MakeMountPoint() {
    auto self = shared_from_this();
    RunBlockingResult<bool>(
        node_.loop,
        [roots = node_.options.path_roots, p = mount_point_, block = req_.capability.block] {
          return CreateMountPointBeneath(roots, p, block, "staging_target_path");
        },
        [self](Result<bool> created) {
          if (!created.ok()) return self->Fail(created.status());
          // Made by this attempt, or by the earlier one this stage repeats.
          const VolumeRecord* earlier = self->node_.volumes.Find(self->req_.volume_id);
          self->mount_point_created_ =
              *created || (earlier != nullptr && earlier->staging_path == self->req_.staging_target_path &&
                           earlier->mount_point_created);
          self->undo_.push_back([t = self.get()](std::function<void(Status)> next) {
            if (!t->mount_point_created_) return next(Status::Ok());
            RunBlockingStatus(
                t->node_.loop,
                [roots = t->node_.options.path_roots, p = t->mount_point_] {
                  return RemoveCreatedMountPoint(roots, p, "staging_target_path");
                },
                next);
          });
          if (self->req_.capability.block) return self->MountBlock();
          self->ProbeFs();
        });
  }

  void MountBlock() {
    auto self = shared_from_this();
    BindMount(node_.loop, device_, mount_point_, req_.capability.read_only, {}, [self](Status s) {
      if (!s.ok()) return self->Fail(s);
      self->PushUnmount();
      self->JournalStaged();
    });
  }

  void ProbeFs() {
    auto self = shared_from_this();
    ProbeDevice(node_.loop, device_, [self](Result<DeviceSignature> sig) {
      if (!sig.ok()) return self->Fail(sig.status());
      const std::string& want = self->req_.capability.fs_type;
      if (sig->blank()) {
        if (self->req_.capability.read_only) {
          return self->Fail(Status::FailedPrecondition("volume " + self->req_.volume_id +
                                                       " has no filesystem and is staged read-only"));
        }
        NBDK_LOG_INFO("mkfs", {{"volume", self->req_.volume_id}, {"device", self->device_}, {"fs_type", want}});
        return MakeFilesystem(self->node_.loop, want, self->device_, [self](Status s) {
          if (!s.ok()) return self->Fail(s);
          self->MountFs();
        });
      }
      if (sig->type != want) {
        return self->Fail(Status::FailedPrecondition("volume " + self->req_.volume_id + " holds " + sig->Describe() +
                                                     ", not an empty device or a " + want +
                                                     " filesystem: refusing to format or mount it"));
      }
      self->MountFs();
    });
  }

  void MountFs() {
    // No set-uid programs or device nodes from a volume's content on the node.
    std::vector<std::string> options = {"nosuid", "nodev"};
    options.insert(options.end(), req_.capability.mount_options.begin(), req_.capability.mount_options.end());
    if (req_.capability.read_only) options.push_back("ro");
    auto self = shared_from_this();
    Mount(node_.loop, req_.capability.fs_type, device_, mount_point_, options, [self](Status s) {
      if (!s.ok()) return self->Fail(s);
      self->PushUnmount();
      self->JournalStaged();
    });
  }

  void PushUnmount() {
    undo_.push_back([this](std::function<void(Status)> next) {
      Unmount(node_.loop, mount_point_, next);
    });
  }

  void JournalStaged() {
    auto self = shared_from_this();
    node_.volumes.Put(Record(std::string(kStaged)), [self](Status s) {
      if (!s.ok()) return self->Fail(s.WithContext("node journal"));
      RunBlockingStatus(
          self->node_.loop,
          [path = self->req_.staging_target_path, st = self->StashContent()] { return WriteStash(path, st); },
          [self](Status) {
            // The stash already names the image; the device is a convenience.
            NBDK_LOG_INFO("volume_staged", {{"volume", self->req_.volume_id}, {"device", self->device_},
                                            {"image", self->resolved_.image.Path()}});
            self->Finish(Status::Ok());
          });
    });
  }

  void Fail(Status error) {
    NBDK_LOG_WARN("stage_failed", {{"volume", req_.volume_id}, {"error", error.ToString()}, {"undo", undo_.size()}});
    error_ = std::move(error);
    RunUndo();
  }

  void RunUndo() {
    if (undo_.empty()) return Finish(error_);
    Undo step = std::move(undo_.back());
    undo_.pop_back();
    auto self = shared_from_this();
    step([self](Status s) {
      if (s.ok()) return self->RunUndo();
      // What is left stays journaled ("staging"): NodeUnstageVolume or a
      // retried stage finishes it.
      NBDK_LOG_ERROR("stage_undo_failed", {{"volume", self->req_.volume_id}, {"error", s.ToString()}});
      self->Finish(Status(self->error_.code(), self->error_.message() + "; cleanup stopped: " + s.message()));
    });
  }

  void Finish(Status status) {
    undo_.clear();
    auto done = std::move(done_);
    done(status);
  }

  NodeContext& node_;
  StageRequest req_;
  VolumeOpLock lock_;
  std::function<void(Status)> done_;
  std::string mount_point_;
  bool mount_point_created_ = false;
  std::string keyfile_;
  ResolvedImage resolved_;
  std::string device_;
  std::vector<Undo> undo_;
  Status error_;
};

}  // namespace

void StageVolume(NodeContext& node, StageRequest request, VolumeOpLock lock, std::function<void(Status)> done) {
  NBDK_CHECK_LOOP_THREAD(node.loop);
  std::make_shared<StageTransaction>(node, std::move(request), std::move(lock), std::move(done))->Start();
}

}  // namespace nbdk
