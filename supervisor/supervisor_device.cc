#include "supervisor/supervisor.h"

#include <memory>

#include "base/command.h"
#include "base/log.h"
#include "netlink/nbd_resize.h"
#include "supervisor/rbd_nbd_argv.h"

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

void Supervisor::UnmapLeftoverDevice(const std::string& device, std::function<void(Status)> done) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  CommandOptions options;
  options.timeout_ms = config_.unmap_command_timeout_ms;
  options.env = config_.child_env;
  RunCommand(loop_, RbdNbdUnmapArgv(config_, device), std::move(options),
             [device, done = std::move(done)](Result<CommandResult> r) {
               if (!r.ok()) return done(r.status().WithContext("unmap leftover " + device));
               if (!r->ok()) return done(Status::Internal("unmap leftover " + device + ": " + r->Describe()));
               NBDK_LOG_INFO("stage_leftover_unmapped", {{"device", device}});
               done(Status::Ok());
             });
}

}  // namespace nbdk
