#include <memory>

#include "base/command.h"
#include "base/log.h"
#include "netlink/nbd_resize.h"
#include "netlink/nbd_sysfs.h"
#include "supervisor/rbd_nbd_argv.h"
#include "supervisor/supervisor.h"

namespace nbdk {

Result<Supervisor::VolumeDevice> Supervisor::MappedDevice(const std::string& volume_id) const {
  Mapping* m = Find(volume_id);
  if (m == nullptr || m->device().empty()) return Status::NotFound("volume " + volume_id + " has no mapped device");
  if (!m->holds_device()) {
    return Status::FailedPrecondition("volume " + volume_id + "'s device " + m->device() + " was released (" +
                                      std::string(MappingStateName(m->state())) + ": " + m->reason() + ")");
  }
  return VolumeDevice{m->device(), m->cookie()};
}

template <typename T>
void Supervisor::OnOwnDevice(const std::string& volume_id, std::function<Result<T>(const std::string& device)> work,
                             std::function<void(Result<T>)> done) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  Result<VolumeDevice> device = MappedDevice(volume_id);
  if (!device.ok()) return done(device.status());
  RunBlockingResult<T>(
      loop_,
      [device = *device, sysfs_root = config_.sysfs_root, work = std::move(work)]() -> Result<T> {
        NBDK_RETURN_IF_ERROR(CheckNbdBackendCookie(device.path, device.cookie, sysfs_root));
        return work(device.path);
      },
      std::move(done));
}

void Supervisor::CheckDevice(const std::string& volume_id, std::function<void(Result<std::string>)> done) {
  OnOwnDevice<std::string>(
      volume_id, [](const std::string& device) -> Result<std::string> { return device; }, std::move(done));
}

void Supervisor::DeviceBytes(const std::string& volume_id, std::function<void(Result<uint64_t>)> done) {
  OnOwnDevice<uint64_t>(volume_id, BlockDeviceBytes, std::move(done));
}

void Supervisor::GrowDevice(const std::string& volume_id, uint64_t bytes, std::function<void(Result<uint64_t>)> done) {
  struct Grown {
    std::string device;
    NbdGrowth growth;
  };
  OnOwnDevice<Grown>(
      volume_id,
      [bytes, sysfs_root = config_.sysfs_root](const std::string& device) -> Result<Grown> {
        Result<NbdGrowth> growth = GrowNbdDevice(device, bytes, sysfs_root);
        if (!growth.ok()) return growth.status();
        return Grown{device, *growth};
      },
      [volume_id, done = std::move(done)](Result<Grown> grown) {
        if (!grown.ok()) return done(grown.status());
        if (grown->growth.after > grown->growth.before) {
          NBDK_LOG_INFO("volume_device_grown",
                        {{"volume", volume_id}, {"device", grown->device}, {"bytes", grown->growth.after}});
        }
        done(grown->growth.after);
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
