#include "csi/node/volume_operations.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "base/log.h"
#include "base/quote_field.h"
#include "csi/key_file.h"
#include "csi/node/device_growth.h"
#include "csi/node/filesystem.h"
#include "csi/node/stash.h"
#include "netlink/nbd_resize.h"

namespace nbdk {
namespace {

// NOT_FOUND unless `path` is where the journal says the volume is: its
// staging path, its staged mount point or one of its targets. Nothing else
// is ever statted or grown.
Status CheckVolumePath(const VolumeRecord& r, const std::string& path) {
  if (path == r.staging_path || path == StagedMountPoint(r.staging_path, r.volume_id)) return Status::Ok();
  for (const PublishedTarget& t : r.published_targets) {
    if (t.path == path) return Status::Ok();
  }
  return Status::NotFound("volume " + r.volume_id + " is not at " + QuoteField(path) + " (staged at " + r.staging_path +
                          ")");
}

// The size of what the volume's user sees: its nbd device, or its LUKS
// mapper (the device less the LUKS header).
void VolumeBytes(NodeContext& node, const VolumeRecord& record, std::function<void(Result<uint64_t>)> done) {
  if (record.luks_mapper.empty()) return node.supervisor.DeviceBytes(record.volume_id, std::move(done));
  RunBlockingResult<uint64_t>(
      node.loop, [device = StagedDevice(record)] { return BlockDeviceBytes(device); }, std::move(done));
}

}  // namespace

void FillVolumeCondition(const Supervisor& supervisor, const VolumeRecord& record, const std::string& boot_id,
                         csi::v1::VolumeCondition* out) {
  auto snap = supervisor.Snapshot(record.volume_id);
  if (!snap) {
    out->set_abnormal(true);
    if (record.boot_id != boot_id) {
      out->set_message("staged before the node rebooted: " + record.nbd_device +
                       " is gone and is not re-mapped behind the orchestrator's back; unstage and stage it again");
    } else {
      out->set_message("no rbd-nbd process serves " + record.nbd_device + " (journal state '" +
                       std::string(VolumeStateName(record.state)) + "')");
    }
    return;
  }
  std::string seconds = std::to_string(snap->ms_in_state / 1000);
  switch (snap->state) {
    case MappingState::kConnected:
      if (!snap->io_stall.empty()) {
        out->set_abnormal(true);
        out->set_message("rbd-nbd pid " + std::to_string(snap->pid) + " serves " + snap->device + ", but " +
                         snap->io_stall);
        return;
      }
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
    case MappingState::kFenced:
      out->set_abnormal(true);
      out->set_message("rbd-nbd for " + snap->device +
                       " died and another client holds the image now: not "
                       "re-attached (unstage the volume): " +
                       snap->reason);
      return;
    case MappingState::kExpired:
      out->set_abnormal(true);
      out->set_message("rbd-nbd for " + snap->device +
                       " expired (the kernel's reattach window passed); IO fails: " + snap->reason);
      return;
    default:
      out->set_abnormal(true);
      out->set_message(std::string("mapping is ") + std::string(MappingStateName(snap->state)) + ": " + snap->reason);
  }
}

void VolumeStats(NodeContext& node, VolumeStatsRequest request, csi::v1::NodeGetVolumeStatsResponse* response,
                 std::function<void(Status)> done) {
  NBDK_CHECK_LOOP_THREAD(node.loop);
  const VolumeRecord* found = node.volumes.Find(request.volume_id);
  if (found == nullptr) return done(Status::NotFound("volume " + request.volume_id + " is not staged on this node"));
  if (Status s = CheckVolumePath(*found, request.volume_path); !s.ok()) return done(s);
  FillVolumeCondition(node.supervisor, *found, node.options.boot_id, response->mutable_volume_condition());
  // An abnormal volume may have no usage to report (no device, a filesystem
  // shut down by EIO): its condition is then the whole answer.
  bool abnormal = response->volume_condition().abnormal();
  if (found->block) {
    return VolumeBytes(node, *found, [response, abnormal, done](Result<uint64_t> size) {
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
  NBDK_CHECK_LOOP_THREAD(node.loop);
  const VolumeRecord* found = node.volumes.Find(request.volume_id);
  if (found == nullptr) return done(Status::NotFound("volume " + request.volume_id + " is not staged on this node"));
  if (Status s = CheckVolumePath(*found, request.volume_path); !s.ok()) return done(s);
  if (!found->snap.empty()) {
    return done(Status::FailedPrecondition("volume " + request.volume_id + " maps snapshot " +
                                           RecordedImage(*found).Spec() + ", which is read-only and never grows"));
  }
  VolumeRecord record = *found;
  auto held = std::make_shared<VolumeOpLock>(std::move(lock));
  NodeContext* n = &node;
  int64_t required = request.required_bytes;
  auto report_size = [n, record, response, held, done](Status s) {
    if (!s.ok()) return done(s);
    VolumeBytes(*n, record, [response, done](Result<uint64_t> size) {
      if (!size.ok()) return done(size.status());
      response->set_capacity_bytes(static_cast<int64_t>(*size));
      done(Status::Ok());
    });
  };
  // Grow the device first when it is smaller than asked (or the CO did not
  // say): rbd-nbd 16 cannot (csi/node/device_growth.h), and growing a filesystem
  // on a device that did not grow would report success for nothing.
  node.supervisor.DeviceBytes(record.volume_id, [n, record, required, report_size](Result<uint64_t> size) {
    if (!size.ok()) return report_size(size.status());
    // The mapper grows after its device, the filesystem after both.
    auto grow_filesystem = [n, record, report_size] {
      auto grow = [n, record, report_size](Status s) {
        if (!s.ok() || record.block) return report_size(s);
        GrowFilesystem(n->loop, record.fs_type, StagedDevice(record),
                       StagedMountPoint(record.staging_path, record.volume_id), report_size);
      };
      if (record.luks_mapper.empty()) return grow(Status::Ok());
      n->host.ResizeLuks(record.luks_mapper,
                         [record, grow](Status s) { grow(s.WithContext("resize " + record.luks_mapper)); });
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
