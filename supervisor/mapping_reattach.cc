// Mapping: unplanned death, re-attach with backoff, expiry, LINK_DEAD, and
// the wait for an attach slot that maps and attaches share.
#include <csignal>

#include "base/log.h"
#include "supervisor/mapping.h"
#include "supervisor/rbd_nbd_argv.h"
#include "supervisor/reattach_backoff.h"

namespace nbdk {
namespace {

// After the kernel's window, so its own timer has failed the waiting IO.
constexpr uint64_t kReleaseSlackMs = 2000;

}  // namespace

void Mapping::OnDeath(std::string reason) {
  ++env_.stats.counters.deaths;
  CancelPending();
  ++epoch_;
  Transition(MappingState::kDead, std::move(reason));
  // The kernel's dead-connection timer started at the death; stop trying a
  // safety margin before it fails IO (never later than half the window).
  uint64_t window = uint64_t{env_.config.reattach_timeout_s} * 1000;
  uint64_t margin = std::min(env_.config.reattach_safety_margin_ms, window / 2);
  uint64_t now = env_.loop.NowMs();
  kernel_gives_up_ms_ = now + window;
  reattach_deadline_ms_ = now + window - margin;
  attempts_ = 0;
  foreign_writers_.clear();
  last_attach_failure_.clear();
  deadline_timer_ = std::make_unique<Timer>(env_.loop);
  deadline_timer_->Start(reattach_deadline_ms_ - now, 0, [this] { Expire(DeadlineReason()); });
  WaitForAttachSlot(AttachQueue::Kind::kReattach, [this] { StartAttachAttempt(); });
}

// The reattach deadline keeps counting from the death while the mapping
// waits (the kernel's window does); the map or attach deadline starts only
// when its process does.
void Mapping::WaitForAttachSlot(AttachQueue::Kind kind, std::function<void()> start) {
  attach_slot_ = kind == AttachQueue::Kind::kReattach
                     ? env_.attach_queue.EnqueueReattach(reattach_deadline_ms_, std::move(start))
                     : env_.attach_queue.EnqueueMap(std::move(start));
  size_t position = env_.attach_queue.Position(*attach_slot_);
  size_t limit = env_.attach_queue.limit();
  if (limit == 0 || env_.attach_queue.in_flight() + position <= limit) return;
  NBDK_LOG_INFO("attach_queued", {{"volume", request_.volume_id},
                                  {"state", MappingStateName(state_)},
                                  {"position", position},
                                  {"in_flight", env_.attach_queue.in_flight()},
                                  {"limit", limit}});
}

void Mapping::StartAttachAttempt() {
  if (env_.loop.NowMs() >= reattach_deadline_ms_) {
    Expire(DeadlineReason());
    return;
  }
  ++attempts_;
  ++env_.stats.counters.reattach_attempts;
  ++epoch_;
  Transition(MappingState::kReattaching, "attempt " + std::to_string(attempts_) +
                                             ": checking the image's clients, then attaching beside the dead "
                                             "owner's lock break");
  CheckClientsBeforeAttach();
}

void Mapping::SpawnAttach() {
  Status s = SpawnRbdNbd(RbdNbdAttachArgv(env_.config, request_, cookie_, device_, TakesLock()), "attach");
  if (!s.ok()) {
    OnAttachFailed("spawn rbd-nbd attach: " + s.message());
    return;
  }
  if (env_.on_server_changed) env_.on_server_changed(request_.volume_id);
  uint64_t now = env_.loop.NowMs();
  uint64_t left = reattach_deadline_ms_ > now ? reattach_deadline_ms_ - now : 0;
  uint64_t limit = std::min(env_.config.map_deadline_ms, left);
  // Success is the device line: `rbd-nbd attach -f` prints it once the
  // connection is reconfigured, exactly like map.
  phase_timer_ = std::make_unique<Timer>(env_.loop);
  phase_timer_->Start(limit, 0, [this, limit] {
    if (state_ != MappingState::kReattaching || !child_) return;
    kill_reason_ = "printed no device within " + std::to_string(limit) + " ms";
    (void)child_->Kill(SIGKILL);
  });
}

std::string Mapping::DeadlineReason() const {
  std::string reason = "reattach deadline passed after " + std::to_string(attempts_) + " attempt(s)";
  if (!last_attach_failure_.empty()) reason += "; last failure: " + last_attach_failure_;
  if (WaitingForAttachSlot()) {
    reason += "; still waiting for an attach slot at place " +
              std::to_string(env_.attach_queue.Position(*attach_slot_)) + " (" +
              std::to_string(env_.attach_queue.in_flight()) + " in flight, limit " +
              std::to_string(env_.attach_queue.limit()) + ")";
  }
  return reason;
}

void Mapping::OnAttachFailed(std::string reason) {
  ++env_.stats.counters.reattach_failures;
  last_attach_failure_ = reason;
  phase_timer_.reset();
  attach_slot_.reset();
  uint64_t delay = ReattachDelayMs(attempts_, env_.config.backoff_initial_ms, env_.config.backoff_cap_ms);
  uint64_t now = env_.loop.NowMs();
  if (now + delay >= reattach_deadline_ms_) {
    Expire(reason + "; the next attempt would be past the reattach deadline");
    return;
  }
  Transition(MappingState::kDead, reason + "; retry in " + std::to_string(delay) + " ms");
  phase_timer_ = std::make_unique<Timer>(env_.loop);
  phase_timer_->Start(delay, 0,
                      [this] { WaitForAttachSlot(AttachQueue::Kind::kReattach, [this] { StartAttachAttempt(); }); });
}

void Mapping::Expire(std::string reason) {
  if (state_ != MappingState::kDead && state_ != MappingState::kReattaching) return;
  ++env_.stats.counters.expirations;
  CancelPending();
  ++epoch_;
  Transition(MappingState::kExpired, std::move(reason));
  NBDK_LOG_ERROR("mapping_expired",
                 {{"volume", request_.volume_id}, {"device", device_}, {"attempts", attempts_}, {"reason", reason_}});
  if (child_) {
    kill_reason_ = "expired";
    (void)child_->Kill(SIGKILL);  // its exit is ignored in Expired
  }
  ReleaseExpiredDeviceAt(kernel_gives_up_ms_ + kReleaseSlackMs);
}

// LINK_DEAD is a second witness of a death; the process exit stays the
// authority. For a mapping that is not Connected it is ignored: a planned
// stop also produces one, and a death already being handled needs no
// second trigger. When Connected:
//  - within link_dead_grace_ms of becoming Connected it is ignored as a
//    late event about the connection this server just replaced;
//  - otherwise the server gets link_dead_grace_ms to exit on its own (a
//    dying rbd-nbd's exit usually follows within milliseconds); if the
//    same server is still running then, it is alive but no longer serves
//    the device (hung): it is killed, and its exit starts the re-attach.
void Mapping::OnLinkDead() {
  ++env_.stats.counters.link_dead_events;
  uint64_t now = env_.loop.NowMs();
  NBDK_LOG_INFO(
      "link_dead",
      {{"volume", request_.volume_id}, {"device", device_}, {"state", MappingStateName(state_)}, {"pid", ServerPid()}});
  if (released_ || state_ != MappingState::kConnected || !ServerRunning() || link_dead_timer_) return;
  if (now - state_since_ms_ < env_.config.link_dead_grace_ms) return;
  uint64_t generation = server_generation_;
  link_dead_timer_ = std::make_unique<Timer>(env_.loop);
  link_dead_timer_->Start(env_.config.link_dead_grace_ms, 0, [this, generation] { OnLinkDeadGraceOver(generation); });
}

void Mapping::OnLinkDeadGraceOver(uint64_t generation) {
  link_dead_timer_.reset();
  if (state_ != MappingState::kConnected || generation != server_generation_ || !ServerRunning()) return;
  ++env_.stats.counters.link_dead_kills;
  NBDK_LOG_WARN("link_dead_server_alive",
                {{"volume", request_.volume_id}, {"pid", ServerPid()}, {"action", "SIGKILL"}});
  kill_reason_ = "LINK_DEAD while alive";
  (void)KillServer(SIGKILL);
}

}  // namespace nbdk
