// NodeUnstageVolume (csi/node/volume_operations.h).
#include <memory>
#include <optional>

#include "base/log.h"
#include "csi/node/confined_path.h"
#include "csi/node/luks_stage.h"
#include "csi/node/stage_leftovers.h"
#include "csi/node/volume_operations.h"
#include "host/mount_table.h"
#include "netlink/nbd_device.h"

namespace nbdk {
namespace {

constexpr const char* kStagingField = "staging_target_path";

std::string TargetList(const VolumeRecord& r) {
  std::string out;
  for (const PublishedTarget& t : r.published_targets) out += (out.empty() ? "" : ", ") + t.path;
  return out;
}

// The steps after the staging mount is gone; each runs only when the one
// before succeeded, so a failure leaves the journal record to retry with.
class Unstage : public std::enable_shared_from_this<Unstage> {
 public:
  Unstage(NodeContext& node, VolumeRecord record, VolumeOpLock lock, std::function<void(Status)> done)
      : node_(node), record_(std::move(record)), lock_(std::move(lock)), done_(std::move(done)) {
    mount_point_ = StagedMountPoint(record_.staging_path, record_.volume_id);
  }

  void Start() {
    Result<VolumeOpLock> image_lock = node_.volumes.LockImage(RecordedImage(record_).Spec());
    if (!image_lock.ok()) return done_(image_lock.status());
    image_lock_.emplace(std::move(image_lock).value());
    auto self = shared_from_this();
    RunBlockingResult<PathKind>(
        node_.loop,
        [roots = node_.options.path_roots, mp = mount_point_] { return InspectBeneath(roots, mp, kStagingField); },
        [self](Result<PathKind> kind) {
          if (!kind.ok()) return self->done_(kind.status());
          if (*kind == PathKind::kMissing) return self->CheckDevice();
          self->node_.host.Unmount(self->mount_point_, [self](Status s) {
            if (!s.ok()) return self->done_(s);
            self->RemoveMountPoint();
          });
        });
  }

 private:
  void RemoveMountPoint() {
    if (!record_.mount_point_created) return CheckDevice();
    auto self = shared_from_this();
    node_.host.RemoveMountPoint(node_.options.path_roots, mount_point_, kStagingField, [self](Status s) {
      if (!s.ok()) return self->done_(s);
      self->CheckDevice();
    });
  }

  // Only a device this boot's supervisor serves is unmapped: after a reboot
  // the journaled device may belong to another volume now. A "staging"
  // record of this boot is a stage that did not finish (a crash, or an
  // undo that stopped) before the daemon restarted: the rbd-nbd it started
  // may still serve a device with the volume's cookie.
  void CheckDevice() {
    if (!node_.supervisor.Snapshot(record_.volume_id)) {
      if (record_.state != VolumeState::kStaging || record_.boot_id != node_.options.boot_id) return ForgetVolume();
      auto self = shared_from_this();
      return UnmapStageLeftovers(node_, record_, [self](Status s) {
        if (!s.ok()) return self->done_(s);
        self->ForgetVolume();
      });
    }
    // Only an encrypted volume, or a stage cut short that may have opened
    // one, can have a mapper.
    if (record_.luks_mapper.empty() && record_.state != VolumeState::kStaging) return Unmap();
    auto self = shared_from_this();
    CloseVolumeLuks(node_, record_.volume_id, {record_.nbd_device}, [self](Status s) {
      if (!s.ok()) return self->done_(s);
      self->Unmap();
    });
  }

  // The mapper is closed: nothing of ours holds the device any more.
  void Unmap() {
    auto self = shared_from_this();
    node_.host.CheckDeviceUnused(record_.nbd_device, node_.options.mountinfo_path, node_.options.sysfs_root,
                                 node_.options.proc_root, [self](Status s) {
                                   if (!s.ok()) return self->done_(s);
                                   self->node_.supervisor.Unmap(self->record_.volume_id, [self](Status s) {
                                     if (!s.ok())
                                       return self->done_(s.WithContext("unmap " + self->record_.nbd_device));
                                     self->ForgetVolume();
                                   });
                                 });
  }

  void ForgetVolume() {
    auto self = shared_from_this();
    node_.host.RemoveKeyFile(record_.keyfile_path, [self](Status s) {
      if (!s.ok()) return self->done_(s);
      self->node_.host.RemoveStash(self->record_.staging_path, [self](Status s) {
        if (!s.ok()) return self->done_(s);
        self->node_.volumes.Remove(self->record_.volume_id, [self](Status s) {
          if (s.ok()) NBDK_LOG_INFO("volume_unstaged", {{"volume", self->record_.volume_id}});
          self->done_(s);
        });
      });
    });
  }

  NodeContext& node_;
  VolumeRecord record_;
  VolumeOpLock lock_;
  std::optional<VolumeOpLock> image_lock_;
  std::function<void(Status)> done_;
  std::string mount_point_;
};

// A volume without a sound record of this node's: its record was damaged
// (quarantined at start), or there never was one (another plugin staged it,
// ceph-csi's node plugin before a switch to nbdkeeper). Nothing says which
// device and mounts are its own, so none is touched. OK once neither a
// device with its cookie (ceph-csi's is the volume ID too) nor a mount at
// its staging mount point is left, as an unstage of a volume never staged
// is; until then an error that says why (`record`) and names what is left,
// for the operator to remove.
void UnstageUnowned(NodeContext& node, const UnstageRequest& request, std::string record, VolumeOpLock lock,
                    std::function<void(Status)> done) {
  std::string mount_point = StagedMountPoint(request.staging_target_path, request.volume_id);
  RunBlockingResult<std::string>(
      node.loop,
      [id = request.volume_id, mount_point, sysfs = node.options.sysfs_root,
       mountinfo = node.options.mountinfo_path]() -> Result<std::string> {
        Result<std::vector<int>> devices = NbdDevicesWithCookie(id, sysfs);
        if (!devices.ok()) return devices.status();
        Result<std::vector<MountEntry>> mounts = ReadMountTable(mountinfo);
        if (!mounts.ok()) return mounts.status();
        std::string left;
        for (int index : *devices) left += (left.empty() ? "" : ", ") + NbdDevicePath(index) + " (its cookie)";
        if (FindMount(*mounts, mount_point) != nullptr) left += (left.empty() ? "" : ", ") + mount_point + " mounted";
        return left;
      },
      [record, held = std::make_shared<VolumeOpLock>(std::move(lock)), done](Result<std::string> left) {
        if (!left.ok()) return done(left.status().WithContext(record));
        if (left->empty()) return done(Status::Ok());
        done(Status::FailedPrecondition(record + "; still there: " + *left +
                                        ". nbdkeeperd does not remove what no record proves its own: unmount "
                                        "and unmap (rbd-nbd unmap) by hand, then unstage again"));
      });
}

}  // namespace

void UnstageVolume(NodeContext& node, UnstageRequest request, VolumeOpLock lock, std::function<void(Status)> done) {
  NBDK_CHECK_LOOP_THREAD(node.loop);
  const VolumeRecord* found = node.volumes.Find(request.volume_id);
  if (found == nullptr) {
    const QuarantinedFile* damaged = node.volumes.FindQuarantined(request.volume_id);
    std::string record =
        damaged != nullptr
            ? "the node journal's record of volume " + request.volume_id + " was damaged (" +
                  damaged->reason.message() + ") and moved to " + damaged->moved_to + " at start"
            : "volume " + request.volume_id + " is not in the node journal: this node's nbdkeeperd did not stage it";
    return UnstageUnowned(node, request, std::move(record), std::move(lock), std::move(done));
  }
  if (found->staging_path != request.staging_target_path) {
    return done(Status::FailedPrecondition("volume " + request.volume_id + " is staged at " + found->staging_path +
                                           ", not at " + request.staging_target_path +
                                           "; unstage it with the path it was staged at"));
  }
  if (!found->published_targets.empty()) {
    return done(Status::FailedPrecondition("volume " + request.volume_id + " is still published at " +
                                           TargetList(*found) + "; unpublish it first"));
  }
  std::make_shared<Unstage>(node, *found, std::move(lock), std::move(done))->Start();
}

}  // namespace nbdk
