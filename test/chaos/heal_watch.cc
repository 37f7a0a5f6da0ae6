#include "test/chaos/heal_watch.h"

#include <algorithm>
#include <thread>

#include "test/common/vm_volume.h"

namespace nbdk::chaos {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(100);

std::string Describe(const std::optional<vmtest::VolumeStatus>& s) {
  if (!s) return "not listed in /status";
  return "/status says " + s->state + " on " + s->device + ", pid " + std::to_string(s->pid) + ", restarts " +
         std::to_string(s->restarts);
}

}  // namespace

Result<ServerSeen> SeeServer(int health_port, const std::string& volume_id) {
  auto s = vmtest::GetVolumeStatus(health_port, volume_id);
  if (!s || s->state != "Connected" || s->pid <= 0) {
    return Status::FailedPrecondition(volume_id + " is not served: " + Describe(s));
  }
  return ServerSeen{s->pid, s->restarts, s->device};
}

Result<double> WaitReattached(int health_port, const std::string& volume_id, const ServerSeen& before,
                              Clock::time_point killed, std::chrono::seconds timeout) {
  std::optional<vmtest::VolumeStatus> s;
  while (Clock::now() - killed < timeout) {
    s = vmtest::GetVolumeStatus(health_port, volume_id);
    if (s && s->state == "Connected" && s->restarts > before.restarts) {
      if (s->device != before.device) {
        return Status::Internal(volume_id + " re-attached on " + s->device + ", not on " + before.device);
      }
      double since_kill = std::chrono::duration<double>(Clock::now() - killed).count();
      return std::max(0.0, since_kill - s->seconds_in_state);
    }
    std::this_thread::sleep_for(kPoll);
  }
  return Status::DeadlineExceeded(volume_id + " not re-attached " + std::to_string(timeout.count()) +
                                  " s after its rbd-nbd was killed: " + Describe(s));
}

Status WaitAllConnected(int health_port, const std::vector<std::string>& volume_ids, std::chrono::seconds timeout) {
  auto give_up = Clock::now() + timeout;
  for (const std::string& id : volume_ids) {
    std::optional<vmtest::VolumeStatus> s;
    while ((s = vmtest::GetVolumeStatus(health_port, id), !s || s->state != "Connected")) {
      if (Clock::now() > give_up) {
        return Status::DeadlineExceeded(id + " not Connected " + std::to_string(timeout.count()) +
                                        " s after the daemon's restart: " + Describe(s));
      }
      std::this_thread::sleep_for(kPoll);
    }
  }
  return Status::Ok();
}

}  // namespace nbdk::chaos
