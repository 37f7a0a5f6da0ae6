#include "supervisor/supervisor.h"

#include <memory>

#include "daemon/base/log.h"
#include "netlink/nbd_resize.h"

namespace nbdk {

void Supervisor::DeviceBytes(const std::string& volume_id, std::function<void(Result<uint64_t>)> done) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  Mapping* m = Find(volume_id);
  if (m == nullptr || m->device().empty()) {
    return done(Status::NotFound("volume " + volume_id + " has no mapped device"));
  }
  auto out = std::make_shared<Result<uint64_t>>(Status::Internal("not run"));
  loop_.RunBlocking([out, device = m->device()] { *out = BlockDeviceBytes(device); },
                    [out, done = std::move(done)] { done(std::move(*out)); });
}

void Supervisor::GrowDevice(const std::string& volume_id, uint64_t bytes, std::function<void(Result<uint64_t>)> done) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  Mapping* m = Find(volume_id);
  if (m == nullptr || m->device().empty()) {
    return done(Status::NotFound("volume " + volume_id + " has no mapped device"));
  }
  struct Growth {
    Result<uint64_t> before = Status::Internal("not run");
    Result<uint64_t> after = Status::Internal("not run");
  };
  auto growth = std::make_shared<Growth>();
  const std::string device = m->device();
  loop_.RunBlocking(
      [growth, device, bytes, sysfs_root = config_.sysfs_root] {
        growth->before = BlockDeviceBytes(device);
        growth->after = GrowNbdDevice(device, bytes, sysfs_root);
      },
      [growth, volume_id, device, done = std::move(done)] {
        if (growth->after.ok() && growth->before.ok() && *growth->after > *growth->before) {
          NBDK_LOG_INFO("volume_device_grown", {{"volume", volume_id}, {"device", device}, {"bytes", *growth->after}});
        }
        done(std::move(growth->after));
      });
}

}  // namespace nbdk
