#include "csi/node/stage_leftovers.h"

#include <memory>
#include <vector>

#include "csi/node/confined_path.h"
#include "csi/node/luks_stage.h"
#include "netlink/nbd_device.h"
#include "netlink/nbd_sysfs.h"

namespace nbdk {
namespace {

void UnmapDevices(NodeContext& node, std::shared_ptr<std::vector<int>> devices, size_t i,
                  std::function<void(Status)> done) {
  if (i == devices->size()) return done(Status::Ok());
  NodeContext* n = &node;
  node.supervisor.UnmapLeftoverDevice(NbdDevicePath((*devices)[i]), [n, devices, i, done](Status s) {
    if (!s.ok()) return done(s);
    UnmapDevices(*n, devices, i + 1, done);
  });
}

}  // namespace

// An encrypted volume's mapper holds its device: it is closed first (a
// stage may have opened it before it died).
void UnmapStageLeftovers(NodeContext& node, const VolumeRecord& record, std::function<void(Status)> done) {
  NBDK_CHECK_LOOP_THREAD(node.loop);
  NodeContext* n = &node;
  if (auto snap = node.supervisor.Snapshot(record.volume_id)) {
    return CloseVolumeLuks(node, record.volume_id, {snap->device}, [n, id = record.volume_id, done](Status s) {
      if (!s.ok()) return done(s);
      n->supervisor.Unmap(id, done);
    });
  }
  std::string cookie = record.cookie.empty() ? record.volume_id : record.cookie;
  RunBlockingResult<std::vector<int>>(
      node.loop, [cookie, sysfs = node.options.sysfs_root] { return NbdDevicesWithCookie(cookie, sysfs); },
      [n, id = record.volume_id, done](Result<std::vector<int>> devices) {
        if (!devices.ok()) return done(devices.status());
        auto indexes = std::make_shared<std::vector<int>>(std::move(*devices));
        std::vector<std::string> paths;
        for (int index : *indexes) paths.push_back(NbdDevicePath(index));
        CloseVolumeLuks(*n, id, std::move(paths), [n, indexes, done](Status s) {
          if (!s.ok()) return done(s);
          UnmapDevices(*n, indexes, 0, done);
        });
      });
}

void ReleaseStageLeftovers(NodeContext& node, const VolumeRecord& record, std::function<void(Status)> done) {
  NBDK_CHECK_LOOP_THREAD(node.loop);
  std::string mount_point = StagedMountPoint(record.staging_path, record.volume_id);
  NodeContext* n = &node;
  RunBlockingResult<PathKind>(
      node.loop,
      [roots = node.options.path_roots, mount_point] {
        return InspectBeneath(roots, mount_point, "staging_target_path");
      },
      [n, record, mount_point, done](Result<PathKind> kind) {
        if (!kind.ok()) return done(kind.status());
        auto unmap = [n, record, done](Status s) {
          if (!s.ok()) return done(s);
          UnmapStageLeftovers(*n, record, done);
        };
        if (*kind == PathKind::kMissing) return unmap(Status::Ok());
        n->host.Unmount(mount_point, unmap);
      });
}

}  // namespace nbdk
