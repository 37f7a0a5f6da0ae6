#include "supervisor/supervisor.h"

#include <memory>

#include "base/log.h"
#include "netlink/nbd_resize.h"

namespace nbdk {

Result<std::string> Supervisor::MappedDevice(const std::string& volume_id) const {
  Mapping* m = Find(volume_id);
  if (m == nullptr || m->device().empty()) return Status::NotFound("volume " + volume_id + " has no mapped device");
  return m->device();
}

void Supervisor::DeviceBytes(const std::string& volume_id, std::function<void(Result<uint64_t>)> done) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  Result<std::string> device = MappedDevice(volume_id);
  if (!device.ok()) return done(device.status());
  auto out = std::make_shared<Result<uint64_t>>(Status::Internal("not run"));
  loop_.RunBlocking([out, device = *device] { *out = BlockDeviceBytes(device); },
                    [out, done = std::move(done)] { done(std::move(*out)); });
}

void Supervisor::GrowDevice(const std::string& volume_id, uint64_t bytes, std::function<void(Result<uint64_t>)> done) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  Result<std::string> device = MappedDevice(volume_id);
  if (!device.ok()) return done(device.status());
  auto growth = std::make_shared<Result<NbdGrowth>>(Status::Internal("not run"));
  loop_.RunBlocking(
      [growth, device = *device, bytes, sysfs_root = config_.sysfs_root] {
        *growth = GrowNbdDevice(device, bytes, sysfs_root);
      },
      [growth, volume_id, device = *device, done = std::move(done)] {
        if (!growth->ok()) return done(growth->status());
        if ((*growth)->after > (*growth)->before) {
          NBDK_LOG_INFO("volume_device_grown", {{"volume", volume_id}, {"device", device}, {"bytes", (*growth)->after}});
        }
        done((*growth)->after);
      });
}

}  // namespace nbdk
