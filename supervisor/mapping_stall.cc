// Mapping: the stall watch. While Connected, the device's IO counters are
// sampled every stall_sample_ms on a pool thread; the StallRule
// (stall_rule.h) decides when the server is probed and when it is stuck.
// A stuck server is killed and its exit re-attaches the device, as for a
// death.
#include <csignal>

#include "base/log.h"
#include "netlink/nbd_device.h"
#include "supervisor/mapping.h"

namespace nbdk {
namespace {

// The admin socket's answer is a memory dump; a live rbd-nbd gives it in
// milliseconds.
constexpr uint64_t kProbeTimeoutMs = 5000;

const char* VerdictName(StallVerdict v) {
  switch (v) {
    case StallVerdict::kHealthy:
      return "healthy";
    case StallVerdict::kHeldByCluster:
      return "held_by_cluster";
    case StallVerdict::kUnknown:
      return "unknown";
    case StallVerdict::kStuck:
      return "stuck";
  }
  return "?";
}

}  // namespace

void Mapping::StartStallWatch() {
  stall_timer_.reset();
  stall_report_.clear();
  last_stall_verdict_ = StallVerdict::kHealthy;
  counters_unreadable_logged_ = false;
  const SupervisorConfig& c = env_.config;
  if (c.stall_sample_ms == 0 || c.stuck_io_limit_ms == 0 || !NbdDeviceIndex(device_).ok()) return;
  stall_rule_.Restart();
  stall_timer_ = std::make_unique<Timer>(env_.loop);
  stall_timer_->Start(c.stall_sample_ms, c.stall_sample_ms, [this] { SampleIo(); });
}

void Mapping::SampleIo() {
  if (stall_busy_) return;  // the previous sample or probe is still out
  stall_busy_ = true;
  std::weak_ptr<bool> weak = alive_;
  uint64_t generation = server_generation_;
  RunBlockingResult<NbdIoCounters>(
      env_.loop,
      [index = *NbdDeviceIndex(device_), root = env_.config.sysfs_root] { return ReadNbdIoCounters(index, root); },
      [this, weak, generation](Result<NbdIoCounters> counters) {
        if (weak.expired()) return;
        stall_busy_ = false;
        if (released_ || state_ != MappingState::kConnected || generation != server_generation_) return;
        if (!counters.ok()) {
          // No verdict without evidence: logged once per server, not reported as a stall.
          if (!counters_unreadable_logged_) {
            NBDK_LOG_WARN("io_counters_unreadable",
                          {{"volume", request_.volume_id}, {"error", counters.status().message()}});
          }
          counters_unreadable_logged_ = true;
          return;
        }
        if (!stall_rule_.Sample(*counters, env_.loop.NowMs())) {
          if (stall_rule_.stalled_ms(env_.loop.NowMs()) == 0) ReportStall({});
          return;
        }
        ProbeStalledServer();
      });
}

void Mapping::ProbeStalledServer() {
  int pid = ServerPid();
  if (pid <= 0) return;
  stall_busy_ = true;
  std::weak_ptr<bool> weak = alive_;
  uint64_t generation = server_generation_;
  auto probe = std::make_shared<ServerProbe>();
  env_.loop.RunBlocking([probe, config = env_.config, pid] { *probe = ProbeServer(config, pid, kProbeTimeoutMs); },
                        [this, weak, generation, probe] {
                          if (weak.expired()) return;
                          stall_busy_ = false;
                          if (released_ || state_ != MappingState::kConnected || generation != server_generation_) {
                            return;
                          }
                          StallJudgement j = stall_rule_.Judge(*probe, env_.loop.NowMs());
                          ReportStall(j);
                          if (j.verdict != StallVerdict::kStuck) return;
                          ++env_.stats.counters.stuck_kills;
                          kill_reason_ = "stuck: " + j.reason;
                          (void)KillServer(SIGKILL);
                        });
}

// Logged when the verdict changes, not at every sample.
void Mapping::ReportStall(const StallJudgement& j) {
  stall_report_ = j.reason;
  if (j.verdict == last_stall_verdict_) return;
  last_stall_verdict_ = j.verdict;
  if (j.verdict == StallVerdict::kHealthy) {
    NBDK_LOG_INFO("io_stall_over", {{"volume", request_.volume_id}, {"device", device_}});
    return;
  }
  if (j.verdict == StallVerdict::kHeldByCluster) ++env_.stats.counters.stalls_held_by_cluster;
  Log(j.verdict == StallVerdict::kStuck ? LogLevel::kError : LogLevel::kWarn, "io_stalled",
      {{"volume", request_.volume_id},
       {"device", device_},
       {"pid", ServerPid()},
       {"verdict", VerdictName(j.verdict)},
       {"limit_ms", stall_rule_.limit_ms()},
       {"reason", j.reason},
       {"action", j.verdict == StallVerdict::kStuck ? "SIGKILL, then re-attach" : "wait"}});
}

}  // namespace nbdk
