#include "csi/volume_operations.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "csi/device_growth.h"
#include "csi/filesystem.h"
#include "csi/key_file.h"
#include "csi/stash.h"
#include "daemon/base/log.h"

namespace nbdk {
namespace {

void DeviceSizeAsync(EventLoop& loop, const std::string& device, std::function<void(Result<uint64_t>)> done) {
  auto r = std::make_shared<Result<uint64_t>>(Status::Internal("not run"));
  loop.RunBlocking([r, device] { *r = BlockDeviceBytes(device); },
                   [r, done = std::move(done)] { done(std::move(*r)); });
}

std::string TargetList(const VolumeRecord& r) {
  std::string out;
  for (const PublishedTarget& t : r.published_targets) out += (out.empty() ? "" : ", ") + t.path;
  return out;
}

}  // namespace

void UnstageVolume(NodeContext& node, UnstageRequest request, VolumeOpLock lock, std::function<void(Status)> done) {
  const VolumeRecord* found = node.volumes.Find(request.volume_id);
  std::string mount_point = StagedMountPoint(request.staging_target_path, request.volume_id);
  auto held = std::make_shared<VolumeOpLock>(std::move(lock));
  if (found == nullptr) {
    // Not ours (or already unstaged): make sure nothing is left mounted.
    return Unmount(node.loop, mount_point, [done, held](Status s) { done(s); });
  }
  if (!found->published_targets.empty()) {
    return done(Status::FailedPrecondition("volume " + request.volume_id + " is still published at " +
                                           TargetList(*found) + "; unpublish it first"));
  }
  VolumeRecord record = *found;
  NodeContext* n = &node;
  Unmount(node.loop, mount_point, [n, record, mount_point, held, done](Status s) {
    if (!s.ok()) return done(s);
    RunBlockingStatus(n->loop, [mount_point] { return RemoveMountPoint(mount_point); }, [n, record, held, done](Status s) {
      if (!s.ok()) return done(s);
      n->supervisor.Unmap(record.volume_id, [n, record, held, done](Status s) {
        if (!s.ok()) return done(s.WithContext("unmap " + record.nbd_device));
        RunBlockingStatus(
            n->loop,
            [record] {
              NBDK_RETURN_IF_ERROR(RemoveKeyFile(record.keyfile_path));
              return RemoveStash(record.staging_path);
            },
            [n, record, held, done](Status s) {
              if (!s.ok()) return done(s);
              n->volumes.Remove(record.volume_id, [record, held, done](Status s) {
                if (s.ok()) NBDK_LOG_INFO("volume_unstaged", {{"volume", record.volume_id}});
                done(s);
              });
            });
      });
    });
  });
}

void PublishVolume(NodeContext& node, PublishRequest request, VolumeOpLock lock, std::function<void(Status)> done) {
  const VolumeRecord* found = node.volumes.Find(request.volume_id);
  if (found == nullptr || found->state != "staged") {
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
  VolumeRecord record = *found;
  std::string source = found->block ? found->nbd_device : StagedMountPoint(found->staging_path, found->volume_id);
  auto held = std::make_shared<VolumeOpLock>(std::move(lock));
  NodeContext* n = &node;
  RunBlockingStatus(
      node.loop,
      [target = request.target_path, block = record.block] { return CreateMountPoint(target, block); },
      [n, request, record, source, held, done](Status s) mutable {
        if (!s.ok()) return done(s);
        BindMount(n->loop, source, request.target_path, request.read_only, request.capability.mount_options,
                  [n, request, record, held, done](Status s) mutable {
                    if (!s.ok()) return done(s);
                    record.published_targets.push_back({request.target_path, request.read_only});
                    n->volumes.Put(record, [n, target = request.target_path, held, done](Status s) {
                      if (s.ok()) return done(s);
                      // Not journaled means not published: a restart would not know it.
                      Unmount(n->loop, target, [s, held, done](Status) { done(s.WithContext("node journal")); });
                    });
                  });
      });
}

void UnpublishVolume(NodeContext& node, UnpublishRequest request, VolumeOpLock lock,
                     std::function<void(Status)> done) {
  auto held = std::make_shared<VolumeOpLock>(std::move(lock));
  NodeContext* n = &node;
  Unmount(node.loop, request.target_path, [n, request, held, done](Status s) {
    if (!s.ok()) return done(s);
    RunBlockingStatus(n->loop, [t = request.target_path] { return RemoveMountPoint(t); }, [n, request, held, done](Status s) {
      if (!s.ok()) return done(s);
      const VolumeRecord* found = n->volumes.Find(request.volume_id);
      if (found == nullptr) return done(Status::Ok());
      VolumeRecord record = *found;
      auto& targets = record.published_targets;
      auto it = std::remove_if(targets.begin(), targets.end(),
                               [&](const PublishedTarget& t) { return t.path == request.target_path; });
      if (it == targets.end()) return done(Status::Ok());
      targets.erase(it, targets.end());
      n->volumes.Put(record, [held, done](Status s) { done(s.WithContext("node journal")); });
    });
  });
}

void FillVolumeCondition(const Supervisor& supervisor, const VolumeRecord& record, const std::string& boot_id,
                         csi::v1::VolumeCondition* out) {
  auto snap = supervisor.Snapshot(record.volume_id);
  if (!snap) {
    out->set_abnormal(true);
    if (record.boot_id != boot_id) {
      out->set_message("staged before the node rebooted: " + record.nbd_device +
                       " is gone and is not re-mapped behind the orchestrator's back; unstage and stage it again");
    } else {
      out->set_message("no rbd-nbd process serves " + record.nbd_device + " (journal state '" + record.state + "')");
    }
    return;
  }
  std::string seconds = std::to_string(snap->ms_in_state / 1000);
  switch (snap->state) {
    case MappingState::kConnected:
      out->set_abnormal(false);
      out->set_message("rbd-nbd pid " + std::to_string(snap->pid) + " serves " + snap->device +
                       (snap->restarts > 0 ? ", re-attached " + std::to_string(snap->restarts) + " time(s)" : ""));
      return;
    case MappingState::kDead:
    case MappingState::kReattaching:
      out->set_abnormal(true);
      out->set_message("rbd-nbd for " + snap->device + " died " + seconds + " s ago, re-attach attempt " +
                       std::to_string(snap->attach_attempts));
      return;
    case MappingState::kExpired:
      out->set_abnormal(true);
      out->set_message("rbd-nbd for " + snap->device + " expired (the kernel's reattach window passed); IO fails: " +
                       snap->reason);
      return;
    default:
      out->set_abnormal(true);
      out->set_message(std::string("mapping is ") + std::string(MappingStateName(snap->state)) + ": " + snap->reason);
  }
}

void VolumeStats(NodeContext& node, VolumeStatsRequest request, csi::v1::NodeGetVolumeStatsResponse* response,
                 std::function<void(Status)> done) {
  const VolumeRecord* found = node.volumes.Find(request.volume_id);
  if (found == nullptr) return done(Status::NotFound("volume " + request.volume_id + " is not staged on this node"));
  FillVolumeCondition(node.supervisor, *found, node.options.boot_id, response->mutable_volume_condition());
  // An abnormal volume may have no usage to report (no device, a filesystem
  // shut down by EIO): its condition is then the whole answer.
  bool abnormal = response->volume_condition().abnormal();
  if (found->block) {
    return DeviceSizeAsync(node.loop, found->nbd_device, [response, abnormal, done](Result<uint64_t> size) {
      if (!size.ok()) return done(abnormal ? Status::Ok() : size.status());
      auto* u = response->add_usage();
      u->set_unit(csi::v1::VolumeUsage::BYTES);
      u->set_total(static_cast<int64_t>(*size));
      done(Status::Ok());
    });
  }
  auto st = std::make_shared<struct statvfs>();
  RunBlockingStatus(
      node.loop,
      [st, path = request.volume_path] {
        if (::statvfs(path.c_str(), st.get()) != 0) return Status::FromErrno(errno, "statvfs " + path);
        return Status::Ok();
      },
      [st, response, abnormal, done](Status s) {
        if (!s.ok() && abnormal) return done(Status::Ok());
        if (!s.ok()) return done(s.code() == Code::kNotFound ? Status::NotFound(s.message()) : s);
        auto* bytes = response->add_usage();
        bytes->set_unit(csi::v1::VolumeUsage::BYTES);
        bytes->set_total(static_cast<int64_t>(st->f_blocks * st->f_frsize));
        bytes->set_available(static_cast<int64_t>(st->f_bavail * st->f_frsize));
        bytes->set_used(static_cast<int64_t>((st->f_blocks - st->f_bfree) * st->f_frsize));
        auto* inodes = response->add_usage();
        inodes->set_unit(csi::v1::VolumeUsage::INODES);
        inodes->set_total(static_cast<int64_t>(st->f_files));
        inodes->set_available(static_cast<int64_t>(st->f_favail));
        inodes->set_used(static_cast<int64_t>(st->f_files - st->f_ffree));
        done(Status::Ok());
      });
}

void ExpandVolume(NodeContext& node, ExpandRequest request, VolumeOpLock lock,
                  csi::v1::NodeExpandVolumeResponse* response, std::function<void(Status)> done) {
  const VolumeRecord* found = node.volumes.Find(request.volume_id);
  if (found == nullptr) return done(Status::NotFound("volume " + request.volume_id + " is not staged on this node"));
  VolumeRecord record = *found;
  auto held = std::make_shared<VolumeOpLock>(std::move(lock));
  NodeContext* n = &node;
  int64_t required = request.required_bytes;
  auto report_size = [n, record, response, held, done](Status s) {
    if (!s.ok()) return done(s);
    DeviceSizeAsync(n->loop, record.nbd_device, [response, done](Result<uint64_t> size) {
      if (!size.ok()) return done(size.status());
      response->set_capacity_bytes(static_cast<int64_t>(*size));
      done(Status::Ok());
    });
  };
  // Grow the device first when it is smaller than asked (or the CO did not
  // say): rbd-nbd 16 cannot (csi/device_growth.h), and growing a filesystem
  // on a device that did not grow would report success for nothing.
  DeviceSizeAsync(node.loop, record.nbd_device, [n, record, required, report_size](Result<uint64_t> size) {
    if (!size.ok()) return report_size(size.status());
    auto grow_filesystem = [n, record, report_size] {
      if (record.block) return report_size(Status::Ok());
      GrowFilesystem(n->loop, record.fs_type, record.nbd_device,
                     StagedMountPoint(record.staging_path, record.volume_id), report_size);
    };
    if (required > 0 && *size >= static_cast<uint64_t>(required)) return grow_filesystem();
    GrowDeviceToImage(*n, record, [record, required, report_size, grow_filesystem](Result<DeviceGrowth> growth) {
      if (!growth.ok()) return report_size(growth.status().WithContext("grow " + record.nbd_device));
      if (required > 0 && growth->device_bytes < static_cast<uint64_t>(required)) {
        return report_size(Status::FailedPrecondition(
            "image " + record.image + " is " + std::to_string(growth->image_bytes) + " bytes, the volume needs " +
            std::to_string(required) + ": expand it with ControllerExpandVolume first"));
      }
      grow_filesystem();
    });
  });
}

}  // namespace nbdk
