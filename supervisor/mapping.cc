// Mapping: the map, the connected state, the process and its exit (the
// other files are listed in mapping.h).
#include "supervisor/mapping.h"

#include <csignal>

#include "base/log.h"
#include "supervisor/rbd_nbd_argv.h"
#include "supervisor/sysfs_io_timeout.h"

namespace nbdk {

namespace {
constexpr size_t kRecentStderrLines = 5;

std::string Join(const std::deque<std::string>& lines, std::string_view sep) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : std::string(sep)) + l;
  return out;
}

std::string JoinArgv(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

}  // namespace

Mapping::Mapping(Env env, MapRequest request)
    : env_(std::move(env)),
      request_(std::move(request)),
      cookie_(request_.cookie.empty() ? request_.volume_id : request_.cookie),
      log_(env_.loop, OutputLogPath(env_.config, request_.volume_id), env_.config.output_tail_lines,
           env_.config.log_file_max_bytes),
      own_clients_(request_.own_clients.begin(), request_.own_clients.end()),
      stall_rule_(env_.config.stuck_io_limit_ms) {
  state_since_ms_ = env_.loop.NowMs();
  // The previous daemon ended before it knew its last server's clients:
  // the one of this host that appeared since that server started is its
  // own (ClaimPending).
  if (request_.clients_before_server) {
    before_start_.watchers = *request_.clients_before_server;
    server_clients_pending_ = true;
  }
}

Mapping::~Mapping() {
  *alive_ = false;
  CancelPending();
  // Member destructors close the process handles without signalling.
}

void Mapping::Transition(MappingState to, std::string reason) {
  MappingState from = state_;
  env_.stats.transitions.Record(from, to);
  state_ = to;
  reason_ = std::move(reason);
  state_since_ms_ = env_.loop.NowMs();
  if (to == MappingState::kConnected) {
    StartStallWatch();
  } else {
    stall_timer_.reset();
  }
  bool bad = to == MappingState::kDead || to == MappingState::kExpired || to == MappingState::kFenced ||
             to == MappingState::kFailed;
  // "state", as in every event that names a mapping's state: the journal's
  // STATE= then finds the transitions into a state (log_journal.h).
  Log(bad ? LogLevel::kWarn : LogLevel::kInfo, "mapping_state",
      {{"volume", request_.volume_id},
       {"from", MappingStateName(from)},
       {"state", MappingStateName(to)},
       {"reason", reason_},
       {"device", device_},
       {"pid", ServerPid()}});
  if (env_.on_state) env_.on_state(request_.volume_id, request_.image.Spec(), device_, to);
}

Status Mapping::SpawnRbdNbd(const std::vector<std::string>& argv, const char* role) {
  SpawnOptions options;
  options.argv = argv;
  options.env = env_.config.child_env;
  // The server must survive a signal to our process group and a daemon
  // stop; kill_signal_on_destroy stays 0 for the same reason.
  options.new_session = true;
  recent_stderr_.clear();
  kill_reason_.reset();
  child_role_ = role;
  // Raw `this`: the child is owned by this mapping, its callbacks never
  // run after the mapping is gone.
  auto child = ChildProcess::Spawn(
      env_.loop, std::move(options), [this](OutputStream s, std::string_view line) { OnLine(s, line); },
      [this](const ExitInfo& exit) { OnProcessGone(exit); });
  if (!child.ok()) return child.status();
  child_ = std::move(child).value();
  ++server_generation_;
  server_clients_pending_ = true;
  NBDK_LOG_INFO(
      "rbd_nbd_spawned",
      {{"volume", request_.volume_id}, {"role", child_role_}, {"pid", child_->pid()}, {"argv", JoinArgv(argv)}});
  PlaceInScope(child_->pid());
  return Status::Ok();
}

void Mapping::OnLine(OutputStream stream, std::string_view line) {
  int pid = child_ ? child_->pid() : 0;
  log_.Append(child_role_ + "[" + std::to_string(pid) + "] " + std::string(OutputStreamName(stream)), line);
  if (stream == OutputStream::kStderr) {
    recent_stderr_.emplace_back(line);
    while (recent_stderr_.size() > kRecentStderrLines) recent_stderr_.pop_front();
    return;
  }
  if (auto device = ParseDeviceLine(line)) OnDeviceLine(*device);
}

void Mapping::StartMap(MapDone done) {
  map_waiters_.push_back(std::move(done));
  ++env_.stats.counters.maps_started;
  WaitForAttachSlot(AttachQueue::Kind::kMap, [this] { CheckClientsBeforeMap(); });
}

void Mapping::SpawnMap() {
  Status s = SpawnRbdNbd(RbdNbdMapArgv(env_.config, request_, cookie_, TakesLock()), "map");
  if (!s.ok()) {
    FailMap(s.WithContext("map " + request_.image.Spec()));
    return;
  }
  phase_timer_ = std::make_unique<Timer>(env_.loop);
  phase_timer_->Start(env_.config.map_deadline_ms, 0, [this] {
    if (state_ != MappingState::kMapping || !child_) return;
    kill_reason_ = "printed no device within " + std::to_string(env_.config.map_deadline_ms) + " ms";
    (void)child_->Kill(SIGKILL);
  });
}

void Mapping::OnDeviceLine(const std::string& device) {
  if (state_ == MappingState::kReattaching) {
    if (device != device_) {
      kill_reason_ = "printed " + device + ", expected " + device_;
      (void)child_->Kill(SIGKILL);
      return;
    }
    phase_timer_.reset();
    deadline_timer_.reset();
    attach_slot_.reset();
    ++restarts_;
    ++env_.stats.counters.reattach_successes;
    // The kernel's window started at the death: kernel_gives_up_ms_ less it.
    uint64_t window_ms = uint64_t{env_.config.reattach_timeout_s} * 1000;
    env_.stats.reattach_seconds.Observe(static_cast<double>(env_.loop.NowMs() + window_ms - kernel_gives_up_ms_) /
                                        1000);
    Transition(MappingState::kConnected, "re-attached after " + std::to_string(attempts_) + " attempt(s)");
    attempts_ = 0;
    std::weak_ptr<bool> weak = alive_;
    uint64_t epoch = epoch_;
    IdentifyOwnClients(before_start_, TakesLock(), [this, weak, epoch](Result<StartedClients> started) {
      if (weak.expired() || epoch != epoch_ || state_ != MappingState::kConnected) return;
      if (!Fenceable() || !started.ok() || started->strangers.empty()) return;
      // Our server holds the lock, and librbd gives it to no one else while
      // that server lives: a client that appeared beside it only watches
      // (a Controller call, a snapshot, another node's stage that will
      // fail), it has not written (supervisor/one_writer.pml).
      if (started->holds_lock) {
        Log(LogLevel::kInfo, "reattach_beside_watchers",
            {{"volume", request_.volume_id},
             {"watchers", InUseBy(request_.image.Path(), started->strangers, "re-attach").message()}});
        return;
      }
      Fence(InUseBy(request_.image.Path(), started->strangers, "re-attach").message());
    });
    return;
  }
  if (state_ != MappingState::kMapping) return;
  device_ = device;
  phase_timer_.reset();
  attach_slot_.reset();
  ++env_.stats.counters.maps_succeeded;
  Transition(MappingState::kConnected, "rbd-nbd map printed " + device);
  // The map is done once its own client is known, so that the staged
  // record names it from the start, and no stranger appeared beside it
  // (the check before the map cannot see one that maps meanwhile).
  auto finish = [this, device] {
    std::weak_ptr<bool> weak = alive_;
    uint64_t epoch = epoch_;
    IdentifyOwnClients(before_start_, TakesLock(), [this, weak, epoch, device](Result<StartedClients> started) {
      if (weak.expired()) return;
      if (epoch == epoch_ && state_ == MappingState::kConnected && Fenceable()) {
        // Unlisted is unproven, unless librbd holds the
        // lock for this process alone.
        if (!started.ok() && !TakesLock()) {
          return RefuseMap(
              started.status().WithContext("list the clients of image " + request_.image.Path() + " after the map"));
        }
        // Another node's stage in flight watches too:
        // refused, though the lock is ours.
        if (started.ok() && !started->strangers.empty()) {
          return RefuseMap(InUseBy(request_.image.Path(), started->strangers, "map"));
        }
      }
      FinishMapWaiters(device);
    });
  };
  if (env_.config.io_timeout_ms == 0) return finish();
  std::weak_ptr<bool> weak = alive_;
  WriteIoTimeout(env_.loop, env_.config.sysfs_root, device, env_.config.io_timeout_ms, [this, weak, finish](Status s) {
    if (weak.expired()) return;
    if (!s.ok()) {
      ++env_.stats.counters.io_timeout_write_failures;
      NBDK_LOG_WARN("io_timeout_write_failed", {{"volume", request_.volume_id}, {"error", s.message()}});
    }
    finish();
  });
}

std::string Mapping::DescribeExit(const std::optional<ExitInfo>& exit) const {
  if (!exit) return "exited (status unknown: not our child)";
  if (exit->term_signal != 0) return "killed by signal " + std::to_string(exit->term_signal);
  return "exited with status " + std::to_string(exit->exit_status);
}

void Mapping::OnProcessGone(std::optional<ExitInfo> exit) {
  int pid = ServerPid();
  std::string how = DescribeExit(exit);
  last_exit_status_ = exit ? std::optional<int64_t>(exit->exit_status) : std::nullopt;
  last_term_signal_ = exit ? exit->term_signal : 0;
  std::string stderr_tail = Join(recent_stderr_, " | ");
  std::optional<std::string> killed = std::move(kill_reason_);
  kill_reason_.reset();
  // Destroying a process object from inside its own callback is safe.
  child_.reset();
  attach_slot_.reset();
  adopted_.reset();
  link_dead_timer_.reset();
  SetDaemonCgroup("no rbd-nbd process");
  NBDK_LOG_INFO("rbd_nbd_exited", {{"volume", request_.volume_id},
                                   {"role", child_role_},
                                   {"pid", pid},
                                   {"how", how},
                                   {"stderr_tail", stderr_tail},
                                   {"state", MappingStateName(state_)}});
  // The stderr tail is rbd-nbd's raw output: it goes into the map's error
  // (the caller's answer) and last_exit_output, never into the state reason
  // that /status publishes by default. A child killed on expiry tells
  // nothing about the failure that led there: its output replaces none.
  std::string detail = killed ? *killed + " (" + how + ")" : how;
  if (state_ != MappingState::kExpired) last_exit_output_ = stderr_tail;
  switch (state_) {
    case MappingState::kMapping: {
      std::string what =
          "rbd-nbd map " + request_.image.Spec() + " " + detail + (stderr_tail.empty() ? "" : ": " + stderr_tail);
      if (killed) return FailMap(Status::DeadlineExceeded(what));
      if (TakesLock()) return FailLockedOutMap(Status::Unavailable(what));
      FailMap(Status::Unavailable(what));
    } break;
    case MappingState::kConnected:
      OnDeath("server pid " + std::to_string(pid) + " " + detail);
      break;
    case MappingState::kReattaching: {
      // Its watch may outlive it: known as ours, it is no stranger to the
      // next attempt.
      std::weak_ptr<bool> weak = alive_;
      uint64_t epoch = epoch_;
      std::string reason = "rbd-nbd attach pid " + std::to_string(pid) + " " + detail;
      IdentifyOwnClients(before_start_, false, [this, weak, epoch, reason](Result<StartedClients>) {
        if (weak.expired() || epoch != epoch_ || state_ != MappingState::kReattaching) return;
        OnAttachFailed(reason);
      });
    } break;
    case MappingState::kUnmapping:
      MaybeFinishStop();
      break;
    default:
      break;  // an attach child killed on expiry, or after Release()
  }
}

void Mapping::FailMap(Status error) {
  CancelPending();
  ++env_.stats.counters.maps_failed;
  Transition(MappingState::kFailed, error.message());
  env_.on_final(request_.volume_id);
  FinishMapWaiters(error);
}

void Mapping::FinishMapWaiters(const Result<std::string>& result) {
  std::vector<MapDone> waiters = std::move(map_waiters_);
  map_waiters_.clear();
  for (auto& w : waiters) w(result);
}

bool Mapping::ServerRunning() const { return (child_ && !child_->exited()) || (adopted_ && !adopted_->exited()); }

Status Mapping::KillServer(int signum) {
  if (child_) return child_->Kill(signum);
  if (adopted_) return adopted_->Kill(signum);
  return Status::FailedPrecondition("no rbd-nbd process");
}

int Mapping::ServerPid() const {
  if (child_) return child_->pid();
  if (adopted_) return adopted_->pid();
  return 0;
}

void Mapping::CancelPending() {
  attach_slot_.reset();
  phase_timer_.reset();
  deadline_timer_.reset();
  link_dead_timer_.reset();
  stall_timer_.reset();
  release_timer_.reset();
}

}  // namespace nbdk
