#include "supervisor/mapping.h"

namespace nbdk {

MappingSnapshot Mapping::Snapshot() const {
  MappingSnapshot s;
  s.volume_id = request_.volume_id;
  s.image = request_.image.Path();
  s.snap = request_.image.snap;
  s.state = state_;
  s.reason = reason_;
  s.ms_in_state = env_.loop.NowMs() - state_since_ms_;
  s.device = device_;
  s.pid = ServerPid();
  s.adopted = adopted_ != nullptr;
  s.cgroup_mode = cgroup_mode_;
  s.scope = scope_;
  s.cgroup_reason = cgroup_reason_;
  s.cookie = cookie_;
  s.restarts = restarts_;
  s.attach_attempts = attempts_;
  if (WaitingForAttachSlot()) s.attach_queue_position = env_.attach_queue.Position(*attach_slot_);
  s.last_exit_status = last_exit_status_;
  s.last_term_signal = last_term_signal_;
  s.last_exit_output = last_exit_output_;
  if (state_ == MappingState::kConnected) s.io_stall = stall_report_;
  if (state_ == MappingState::kDead || state_ == MappingState::kReattaching) {
    uint64_t now = env_.loop.NowMs();
    s.reattach_ms_left = reattach_deadline_ms_ > now ? reattach_deadline_ms_ - now : 0;
  }
  s.output_tail = log_.Tail();
  s.log_path = log_.path();
  s.own_clients.assign(own_clients_.begin(), own_clients_.end());
  if (server_clients_pending_ && TracksClients()) s.clients_before_server = NewClients({}, before_start_);
  return s;
}

}  // namespace nbdk
