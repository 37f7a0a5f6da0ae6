#include "csi/node/stage_transaction.h"

#include <memory>
#include <optional>
#include <vector>

#include "base/log.h"
#include "base/quote_field.h"
#include "csi/mount_flags.h"
#include "csi/node/confined_path.h"
#include "csi/node/luks_stage.h"
#include "csi/node/stage_leftovers.h"
#include "csi/node/stage_rules.h"
#include "csi/topology.h"

namespace nbdk {
namespace {

constexpr const char* kStagingField = "staging_target_path";

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
    if (existing != nullptr && existing->state == VolumeState::kStaged && existing->boot_id == node_.options.boot_id) {
      return Finish(CheckRestage(*existing, req_));
    }
    auto self = shared_from_this();
    RunBlockingResult<PathKind>(
        node_.loop,
        [roots = node_.options.path_roots, path = req_.staging_target_path] {
          return InspectBeneath(roots, path, kStagingField);
        },
        [self](Result<PathKind> kind) {
          if (!kind.ok()) return self->Finish(kind.status());
          if (*kind != PathKind::kDirectory) {
            return self->Finish(Status::FailedPrecondition(
                "staging_target_path " + QuoteField(self->req_.staging_target_path) + " is not an existing directory"));
          }
          self->ReleaseLeftovers();
        });
  }

 private:
  // Each step that did something pushes its undo (the Undo* members
  // below). An undo reports its Status: a failed one stops the undo
  // (unmapping under a mount that would not come off would be worse than a
  // leftover), and the journal record then names what is left.
  struct UndoStep {
    const char* what;  // for the log and the error
    void (StageTransaction::*run)(StatusCallback next);
  };

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
    node_.host.WriteKeyFile(node_.options.key_dir, req_.volume_id, req_.user_key, [self](Result<std::string> path) {
      if (!path.ok()) return self->Fail(path.status());
      self->keyfile_ = *path;
      self->undo_.push_back({"remove key file", &StageTransaction::UndoKeyFile});
      self->Resolve();
    });
  }

  void Resolve() {
    auto self = shared_from_this();
    ResolveImage(node_.loop, node_.rados, node_.options.resolve, req_, keyfile_, [self](Result<ResolvedImage> r) {
      if (!r.ok()) return self->Fail(r.status());
      self->resolved_ = std::move(*r);
      StagedVolumes& staged = self->node_.volumes;
      Result<VolumeOpLock> image_lock = staged.LockImage(self->resolved_.image.Spec());
      if (!image_lock.ok()) return self->Fail(image_lock.status());
      self->image_lock_.emplace(std::move(image_lock).value());
      if (Status s = CheckImageNotStaged(staged, self->req_.volume_id, self->resolved_); !s.ok()) return self->Fail(s);
      self->JournalStaging();
    });
  }

  // The volume's rbd-nbd options and the node's read affinity: journaled
  // with the volume, so every re-attach reads as the first map did.
  std::vector<std::string> MapOptions() const { return WithReadAffinity(req_.map_options, resolved_.read_affinity); }

  VolumeRecord Record(VolumeState state) const {
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
    r.snap = image.snap;
    r.user_id = image.user_id;
    r.keyfile_path = keyfile_;
    r.ceph_conf_path = image.ceph_conf;
    r.nbd_device = device_;
    r.luks_mapper = mapper_;
    r.cookie = req_.volume_id;
    r.map_options = MapOptions();
    r.fs_type = req_.capability.fs_type;
    r.block = req_.capability.block;
    r.read_only = req_.capability.read_only;
    r.multi_node = req_.capability.multi_node;
    r.mount_flags = req_.capability.mount_options;
    r.staging_path = req_.staging_target_path;
    r.mount_point_created = mount_point_created_;
    r.boot_id = node_.options.boot_id;
    r.reattach_timeout_s = node_.supervisor.config().reattach_timeout_s;
    auto snap = node_.supervisor.Snapshot(req_.volume_id);
    r.rbd_nbd_pid = snap ? snap->pid : 0;
    if (snap) {
      r.rbd_clients = snap->own_clients;
      r.rbd_clients_before = snap->clients_before_server;
    }
    r.state = state;
    return r;
  }

  void JournalStaging() {
    auto self = shared_from_this();
    node_.volumes.Put(Record(VolumeState::kStaging), [self](Status s) {
      if (!s.ok()) return self->Fail(s.WithContext("node journal"));
      self->journaled_ = true;
      self->undo_.back() = {"forget volume (key file, journal record)", &StageTransaction::UndoJournal};
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
    st.encrypted = req_.encryption.has_value();
    st.cluster_id = resolved_.cluster_id;
    st.cookie = req_.volume_id;
    return st;
  }

  void Stash() {
    auto self = shared_from_this();
    node_.host.WriteStash(req_.staging_target_path, StashContent(), [self](Status s) {
      if (!s.ok()) return self->Fail(s);
      self->stash_written_ = true;
      self->undo_.push_back({"remove stash", &StageTransaction::UndoStash});
      self->Map();
    });
  }

  void Map() {
    MapRequest m;
    m.volume_id = req_.volume_id;
    m.image = resolved_.image;
    m.read_only = req_.capability.read_only;
    m.map_options = MapOptions();
    m.cookie = req_.volume_id;
    m.multi_node = req_.capability.multi_node;
    // A stage repeated after a reboot or a failed attempt: that earlier
    // rbd-nbd's watch, if it outlived it, is this volume's own.
    if (const VolumeRecord* earlier = node_.volumes.Find(req_.volume_id);
        earlier && RecordedImage(*earlier).Spec() == m.image.Spec()) {
      m.own_clients = earlier->rbd_clients;
    }
    auto self = shared_from_this();
    node_.supervisor.Map(std::move(m), [self](Result<std::string> device) {
      if (!device.ok()) return self->Fail(device.status());
      self->device_ = *device;
      self->undo_.push_back({"unmap", &StageTransaction::UndoMap});
      if (self->req_.encryption) return self->OpenLuks();
      self->MakeMountPoint();
    });
  }

  void OpenLuks() {
    auto self = shared_from_this();
    OpenStagedLuks(node_, req_, resolved_, device_, [self](Result<std::string> mapper) {
      if (!mapper.ok()) return self->Fail(mapper.status());
      self->mapper_ = *mapper;
      self->undo_.push_back({"close LUKS mapper", &StageTransaction::UndoLuks});
      self->MakeMountPoint();
    });
  }

  // What the filesystem or the bind mount sits on.
  std::string VolumeDevice() const { return mapper_.empty() ? device_ : LuksMapperPath(mapper_); }

  void MakeMountPoint() {
    auto self = shared_from_this();
    node_.host.CreateMountPoint(
        node_.options.path_roots, mount_point_, req_.capability.block, kStagingField, [self](Result<bool> created) {
          if (!created.ok()) return self->Fail(created.status());
          // Made by this attempt, or by the earlier one this stage repeats.
          const VolumeRecord* earlier = self->node_.volumes.Find(self->req_.volume_id);
          self->mount_point_created_ =
              *created || (earlier != nullptr && earlier->staging_path == self->req_.staging_target_path &&
                           earlier->mount_point_created);
          self->undo_.push_back({"remove mount point", &StageTransaction::UndoMountPoint});
          if (self->req_.capability.block) return self->MountBlock();
          self->ProbeFs();
        });
  }

  void MountBlock() {
    auto self = shared_from_this();
    node_.host.BindMount(VolumeDevice(), mount_point_, req_.capability.read_only, {}, [self](Status s) {
      if (!s.ok()) return self->Fail(s);
      self->undo_.push_back({"unmount", &StageTransaction::UndoMount});
      self->JournalStaged();
    });
  }

  void ProbeFs() {
    auto self = shared_from_this();
    node_.host.ProbeDevice(VolumeDevice(), [self](Result<DeviceSignature> sig) {
      if (!sig.ok()) return self->Fail(sig.status());
      const std::string& want = self->req_.capability.fs_type;
      if (sig->blank()) {
        if (self->req_.capability.read_only) {
          return self->Fail(Status::FailedPrecondition("volume " + self->req_.volume_id +
                                                       " has no filesystem and is staged read-only"));
        }
        NBDK_LOG_INFO("mkfs", {{"volume", self->req_.volume_id}, {"device", self->VolumeDevice()}, {"fs_type", want}});
        return self->node_.host.MakeFilesystem(want, self->req_.mkfs_options, self->VolumeDevice(), [self](Status s) {
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
    std::vector<std::string> options = StagingMountOptions(req_.capability.mount_options, req_.capability.read_only);
    auto self = shared_from_this();
    node_.host.Mount(req_.capability.fs_type, VolumeDevice(), mount_point_, options, [self](Status s) {
      if (!s.ok()) return self->Fail(s);
      self->undo_.push_back({"unmount", &StageTransaction::UndoMount});
      self->JournalStaged();
    });
  }

  void JournalStaged() {
    auto self = shared_from_this();
    node_.volumes.Put(Record(VolumeState::kStaged), [self](Status s) {
      if (!s.ok()) return self->Fail(s.WithContext("node journal"));
      self->node_.host.WriteStash(self->req_.staging_target_path, self->StashContent(), [self](Status) {
        // The stash already names the image; the device is a convenience.
        NBDK_LOG_INFO(
            "volume_staged",
            {{"volume", self->req_.volume_id}, {"device", self->device_}, {"image", self->resolved_.image.Spec()}});
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
    UndoStep step = std::move(undo_.back());
    undo_.pop_back();
    auto self = shared_from_this();
    (this->*step.run)([self, what = step.what](Status s) {
      if (s.ok()) return self->RunUndo();
      self->UndoStopped(what, s);
    });
  }

  void UndoKeyFile(StatusCallback next) { node_.host.RemoveKeyFile(keyfile_, std::move(next)); }

  // Replaces UndoKeyFile once the record names the key file: the key goes
  // first and the record last, so a key that would not go is not forgotten.
  void UndoJournal(StatusCallback next) {
    auto self = shared_from_this();
    node_.host.RemoveKeyFile(keyfile_, [self, next](Status s) {
      if (!s.ok()) return next(s);
      self->node_.volumes.Remove(self->req_.volume_id, [self, next](Status s) {
        if (s.ok()) self->journaled_ = false;
        next(s);
      });
    });
  }

  void UndoStash(StatusCallback next) {
    auto self = shared_from_this();
    node_.host.RemoveStash(req_.staging_target_path, [self, next](Status s) {
      if (s.ok()) self->stash_written_ = false;
      next(s);
    });
  }

  void UndoMap(StatusCallback next) {
    auto self = shared_from_this();
    node_.supervisor.Unmap(req_.volume_id, [self, next](Status s) {
      if (s.ok()) self->device_.clear();
      next(s);
    });
  }

  void UndoLuks(StatusCallback next) {
    auto self = shared_from_this();
    node_.host.CloseLuks(mapper_, [self, next](Status s) {
      if (s.code() == Code::kNotFound) s = Status::Ok();
      if (s.ok()) self->mapper_.clear();
      next(s);
    });
  }

  void UndoMountPoint(StatusCallback next) {
    if (!mount_point_created_) return next(Status::Ok());
    auto self = shared_from_this();
    node_.host.RemoveMountPoint(node_.options.path_roots, mount_point_, kStagingField, [self, next](Status s) {
      if (s.ok()) self->mount_point_created_ = false;
      next(s);
    });
  }

  void UndoMount(StatusCallback next) { node_.host.Unmount(mount_point_, std::move(next)); }

  // What is left stays journaled ("staging"), and the record is written
  // again to say what that is - the device still mapped, the mount point
  // this stage made - so NodeUnstageVolume or a retried stage can finish
  // it, also after a restart. The stash, if still there, names the device.
  void UndoStopped(const char* what, const Status& s) {
    NBDK_LOG_ERROR("stage_undo_failed", {{"volume", req_.volume_id}, {"step", what}, {"error", s.ToString()}});
    Status result(error_.code(), error_.message() + "; cleanup stopped at " + what + ": " + s.message());
    if (!journaled_) return Finish(result);
    auto self = shared_from_this();
    node_.volumes.Put(Record(VolumeState::kStaging), [self, result](Status s) {
      if (!s.ok()) {
        NBDK_LOG_ERROR("stage_leftovers_unjournaled", {{"volume", self->req_.volume_id}, {"error", s.ToString()}});
      }
      if (!self->stash_written_) return self->Finish(result);
      self->node_.host.WriteStash(self->req_.staging_target_path, self->StashContent(),
                                  [self, result](Status) { self->Finish(result); });
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
  std::optional<VolumeOpLock> image_lock_;  // once the image is known
  std::function<void(Status)> done_;
  std::string mount_point_;
  ResolvedImage resolved_;
  bool mount_point_created_ = false;
  std::string keyfile_;
  std::string device_;
  std::string mapper_;  // an encrypted volume's open LUKS mapper
  std::vector<UndoStep> undo_;
  Status error_;
  bool journaled_ = false;      // a record of this volume is on disk
  bool stash_written_ = false;  // the stash is in the staging directory
};

}  // namespace

void StageVolume(NodeContext& node, StageRequest request, VolumeOpLock lock, std::function<void(Status)> done) {
  NBDK_CHECK_LOOP_THREAD(node.loop);
  std::make_shared<StageTransaction>(node, std::move(request), std::move(lock), std::move(done))->Start();
}

}  // namespace nbdk
