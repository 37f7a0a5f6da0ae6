// Mapping: planned stops (Unmap, Detach) and Release.
#include <csignal>

#include "base/command.h"
#include "base/log.h"
#include "netlink/nbd_device.h"
#include "netlink/nbd_sysfs.h"
#include "supervisor/mapping.h"
#include "supervisor/rbd_nbd_argv.h"

namespace nbdk {

namespace {
// rbd-nbd unmap's complaints when nothing is connected to the device.
bool LooksNotMapped(const CommandResult& r) {
  for (std::string_view hint :
       {"not mapped", "not used", "No such", "failed to open device", "does not exist", "Invalid argument"}) {
    if (r.stderr_text.find(hint) != std::string::npos) return true;
  }
  return false;
}
}  // namespace

bool Mapping::SettleStopEarly(const char* what, StopDone& done) {
  switch (state_) {
    case MappingState::kMapping:
      if (WaitingForAttachSlot()) {
        // Nothing was spawned yet: the map is simply called off. The map's
        // callers hear of it last, when the volume is already forgotten.
        stop_waiters_.push_back(std::move(done));
        FinishStop(MappingState::kUnmapped, Status::Ok(), std::string(what) + " before the map started");
        FinishMapWaiters(Status::Aborted("volume " + request_.volume_id + ": " + what +
                                         " requested while the map waited for an attach slot"));
        return true;
      }
      done(Status::Aborted("volume " + request_.volume_id + ": map in progress; retry the " + what + " later"));
      return true;
    case MappingState::kUnmapping:
      stop_waiters_.push_back(std::move(done));
      return true;
    case MappingState::kUnmapped:
    case MappingState::kFailed:
      done(Status::Ok());
      return true;
    default:
      return false;
  }
}

void Mapping::Unmap(StopDone done) {
  if (SettleStopEarly("unmap", done)) return;
  if (released_) {
    done(Status::Aborted("volume " + request_.volume_id + ": released by a daemon stop"));
    return;
  }
  ++env_.stats.counters.unmaps;
  stop_waiters_.push_back(std::move(done));
  CancelPending();
  ++epoch_;
  detaching_ = false;
  unmap_command_done_ = false;
  bool attach_in_flight = state_ == MappingState::kReattaching;
  unmap_from_connected_ = state_ == MappingState::kConnected;
  Transition(MappingState::kUnmapping, "unmap requested");
  if (attach_in_flight && child_) {
    kill_reason_ = "unmap requested";
    (void)child_->Kill(SIGKILL);
  }
  StartUnmapCommand();
}

void Mapping::RunUnmapCommand(std::function<void(const Result<CommandResult>&)> done) {
  CommandOptions options;
  options.timeout_ms = env_.config.unmap_command_timeout_ms;
  options.env = env_.config.child_env;
  std::weak_ptr<bool> weak = alive_;
  RunCommand(env_.loop, RbdNbdUnmapArgv(env_.config, device_), std::move(options),
             [weak, done = std::move(done)](Result<CommandResult> r) {
               if (!weak.expired()) done(r);
             });
}

void Mapping::CheckDeviceIsOurs(std::function<void(Status)> then) {
  std::weak_ptr<bool> weak = alive_;
  RunBlockingStatus(
      env_.loop,
      [device = device_, cookie = cookie_, root = env_.config.sysfs_root] {
        return CheckNbdBackendCookie(device, cookie, root);
      },
      [weak, then = std::move(then)](Status ours) {
        if (!weak.expired()) then(ours);
      });
}

// Past its window the kernel fails new IO, but a request that was in
// flight at the death stays held for ever: with rbd-nbd's own timeout at 0
// the queue timeout only re-arms it (docs/design/kernel-timeouts.md), and the
// filesystem above hangs on it. Disconnecting the device (`rbd-nbd unmap`,
// the kernel's nbd_clear_que) fails it too, so every write the volume lost
// is reported as an IO error and nothing waits for ever. Not before the
// window has passed: until then an attach could still have saved it.
void Mapping::ReleaseExpiredDeviceAt(uint64_t when_ms) {
  uint64_t now = env_.loop.NowMs();
  release_timer_ = std::make_unique<Timer>(env_.loop);
  release_timer_->Start(when_ms > now ? when_ms - now : 0, 0,
                        [this] { ReleaseDevice("expired_device_released", "the IO it held fails too"); });
}

// Only while the device still carries our cookie (CheckNbdBackendCookie):
// after a daemon restart or a fence the index may serve another volume. The
// mapping keeps its state; its mount and record stay for the unstage.
void Mapping::ReleaseDevice(const char* event, std::string why) {
  MappingState state = state_;
  uint64_t epoch = epoch_;
  CheckDeviceIsOurs([this, event, why, state, epoch](Status ours) {
    if (epoch != epoch_ || state_ != state) return;
    if (!ours.ok()) {
      device_released_ = true;
      NBDK_LOG_INFO(
          event,
          {{"volume", request_.volume_id}, {"device", device_}, {"outcome", "not ours any more: " + ours.message()}});
      return;
    }
    RunUnmapCommand([this, event, why, state, epoch](const Result<CommandResult>& r) {
      if (epoch != epoch_ || state_ != state) return;
      bool ok = r.ok() && (r->ok() || LooksNotMapped(*r));
      std::string what = r.ok() ? r->Describe() : r.status().message();
      if (r.ok()) {
        for (const auto& text : {r->stdout_text, r->stderr_text}) {
          if (!text.empty()) log_.Append("release unmap", text);
        }
      }
      if (ok) {
        device_released_ = true;
        reason_ += "; the device was disconnected, so " + why;
      }
      Log(ok ? LogLevel::kInfo : LogLevel::kError, event,
          {{"volume", request_.volume_id}, {"device", device_}, {"outcome", ok ? "disconnected" : what}});
    });
  });
}

void Mapping::StartUnmapCommand() {
  if (device_released_) {
    // Nothing of ours is left on the device; it may be another volume's.
    OnUnmapCommandDone(CommandResult{});
    return;
  }
  uint64_t epoch = epoch_;
  auto unmap = [this, epoch] {
    RunUnmapCommand([this, epoch](const Result<CommandResult>& r) {
      if (epoch != epoch_ || state_ != MappingState::kUnmapping) return;
      OnUnmapCommandDone(r);
    });
  };
  // A server of ours connected the device, and the kernel lets no other
  // connect while it serves: only a device without one may be another's.
  if (ServerRunning()) return unmap();
  CheckDeviceIsOurs([this, epoch, unmap](Status ours) {
    if (epoch != epoch_ || state_ != MappingState::kUnmapping) return;
    if (!ours.ok() && ours.code() == Code::kFailedPrecondition) {
      // Another volume's now, or nothing's: never disconnect it.
      device_released_ = true;
      NBDK_LOG_WARN("unmap_device_not_ours", {{"volume", request_.volume_id}, {"error", ours.message()}});
      return OnUnmapCommandDone(CommandResult{});
    }
    if (!ours.ok()) return OnUnmapCommandDone(ours);
    unmap();
  });
}

void Mapping::OnUnmapCommandDone(const Result<CommandResult>& r) {
  bool ok = r.ok() && r->ok();
  std::string what = r.ok() ? r->Describe() : r.status().message();
  if (r.ok()) {
    for (const auto& text : {r->stdout_text, r->stderr_text}) {
      if (!text.empty()) log_.Append("unmap", text);
    }
  }
  if (!ok && unmap_from_connected_ && ServerRunning()) {
    // The server still serves the device: nothing changed, report it.
    Transition(MappingState::kConnected, "unmap failed: " + what);
    std::vector<StopDone> waiters = std::move(stop_waiters_);
    stop_waiters_.clear();
    for (auto& w : waiters) w(Status::Unavailable("rbd-nbd unmap " + device_ + ": " + what));
    return;
  }
  if (!ok && !(r.ok() && LooksNotMapped(*r))) {
    // No server and an unexplained failure: stop retrying, keep it listed
    // so a later Unmap can try again.
    ++epoch_;
    Transition(MappingState::kExpired, "unmap failed: " + what);
    std::vector<StopDone> waiters = std::move(stop_waiters_);
    stop_waiters_.clear();
    for (auto& w : waiters) w(Status::Unavailable("rbd-nbd unmap " + device_ + ": " + what));
    return;
  }
  unmap_command_done_ = true;
  if (ServerRunning()) {
    // rbd-nbd unmap disconnected the device; the server should exit now.
    phase_timer_ = std::make_unique<Timer>(env_.loop);
    phase_timer_->Start(env_.config.unmap_exit_wait_ms, env_.config.unmap_exit_wait_ms, [this] {
      NBDK_LOG_WARN("unmap_server_lingers", {{"volume", request_.volume_id}, {"pid", ServerPid()}});
      (void)KillServer(SIGKILL);
    });
  }
  MaybeFinishStop();
}

void Mapping::Detach(StopDone done) {
  if (SettleStopEarly("detach", done)) return;
  ++env_.stats.counters.detaches;
  stop_waiters_.push_back(std::move(done));
  CancelPending();
  ++epoch_;
  detaching_ = true;
  bool serving = state_ == MappingState::kConnected;
  Transition(MappingState::kUnmapping, "detach requested");
  if (ServerRunning()) {
    // SIGTERM: rbd-nbd releases its lock and leaves the device configured.
    // A killed attach child had no connection to leave.
    kill_reason_ = "detach requested";
    Status s = KillServer(serving ? SIGTERM : SIGKILL);
    if (!s.ok()) NBDK_LOG_WARN("detach_signal_failed", {{"volume", request_.volume_id}, {"error", s.message()}});
    phase_timer_ = std::make_unique<Timer>(env_.loop);
    phase_timer_->Start(env_.config.unmap_exit_wait_ms, env_.config.unmap_exit_wait_ms,
                        [this] { (void)KillServer(SIGKILL); });
  }
  MaybeFinishStop();
}

void Mapping::MaybeFinishStop() {
  if (state_ != MappingState::kUnmapping || ServerRunning()) return;
  if (detaching_) {
    FinishStop(MappingState::kUnmapped, Status::Ok(), "detached");
  } else if (unmap_command_done_) {
    FinishStop(MappingState::kUnmapped, Status::Ok(), "unmapped");
  }
}

void Mapping::FinishStop(MappingState to, Status status, std::string reason) {
  CancelPending();
  Transition(to, std::move(reason));
  // An unmapped volume leaves no log behind; a detached one is still
  // staged and its log stays.
  if (to == MappingState::kUnmapped && !detaching_) log_.Remove();
  env_.on_final(request_.volume_id);
  std::vector<StopDone> waiters = std::move(stop_waiters_);
  stop_waiters_.clear();
  for (auto& w : waiters) w(status);
}

void Mapping::Release() {
  released_ = true;
  ++epoch_;
  CancelPending();
  NBDK_LOG_INFO("mapping_released",
                {{"volume", request_.volume_id}, {"state", MappingStateName(state_)}, {"pid", ServerPid()}});
  child_.reset();
  adopted_.reset();
  std::vector<MapDone> maps = std::move(map_waiters_);
  std::vector<StopDone> stops = std::move(stop_waiters_);
  map_waiters_.clear();
  stop_waiters_.clear();
  Status aborted = Status::Aborted("volume " + request_.volume_id + ": released by a daemon stop");
  for (auto& w : maps) w(aborted);
  for (auto& w : stops) w(aborted);
}

}  // namespace nbdk
