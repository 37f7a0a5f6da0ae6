#include "supervisor/stall_rule.h"

#include <algorithm>
#include <cstdio>

namespace nbdk {
namespace {

constexpr uint32_t kMaxBackoffDoublings = 3;  // 8x

std::string Seconds(uint64_t ms) { return std::to_string(ms / 1000) + " s"; }

std::string DescribeOps(const LibradosOps& ops) {
  std::string osds;
  for (int osd : ops.osds) osds += (osds.empty() ? "" : ",") + (osd < 0 ? "none yet" : "osd." + std::to_string(osd));
  char age[32];
  std::snprintf(age, sizeof age, "%.1f s", ops.oldest_age_s);
  return std::to_string(ops.count) + " librados op(s) in flight, the oldest " + age + ", to " + osds;
}

}  // namespace

// The counters are the device's and outlive its server: a completion
// between the re-attach and the next sample still resets the backoff.
// Also the reset after a completion and after a stuck verdict.
void StallRule::Restart() { quiet_ = stalled_ = idle_server_seen_ = silent_seen_ = false; }

uint64_t StallRule::limit_ms() const {
  return base_limit_ms_ << std::min(stuck_without_progress_, kMaxBackoffDoublings);
}

uint64_t StallRule::stalled_ms(uint64_t now_ms) const {
  return stalled_ && now_ms > stalled_since_ms_ ? now_ms - stalled_since_ms_ : 0;
}

uint64_t StallRule::quiet_ms(uint64_t now_ms) const {
  return quiet_ && now_ms > quiet_since_ms_ ? now_ms - quiet_since_ms_ : 0;
}

bool StallRule::Sample(const NbdIoCounters& counters, uint64_t now_ms) {
  bool completed_some = have_sample_ && counters.completed != last_completed_;
  bool first = !have_sample_;
  if (completed_some) stuck_without_progress_ = 0;
  have_sample_ = true;
  last_completed_ = counters.completed;
  if (first || completed_some) {
    Restart();
    return false;
  }
  if (!quiet_) {
    quiet_ = true;
    quiet_since_ms_ = now_ms;
  }
  if (counters.in_flight == 0) {
    stalled_ = idle_server_seen_ = false;
  } else if (!stalled_) {
    stalled_ = true;
    stalled_since_ms_ = now_ms;
  }
  if (base_limit_ms_ == 0) return false;
  return (stalled_ ? stalled_ms(now_ms) : quiet_ms(now_ms)) >= limit_ms();
}

// Nothing counted in flight: only a server that cannot answer at all is
// stuck; one that answers is idle, and the quiet clock starts again. An
// idle server's socket gets a second chance one sample later, as a loaded
// host may keep any answer past the probe's timeout.
StallJudgement StallRule::JudgeIdle(const ServerProbe& probe, uint64_t now_ms) {
  std::string quiet = "no IO completed for " + Seconds(quiet_ms(now_ms)) +
                      " and no read or write is counted in flight (a flush is not counted); ";
  bool twice_silent = probe.silent && silent_seen_;
  silent_seen_ = probe.silent;
  if (probe.stopped) return {StallVerdict::kStuck, quiet + "rbd-nbd is stopped"};
  std::string silent = "rbd-nbd's admin socket does not answer (" + probe.error + ")";
  if (twice_silent) return {StallVerdict::kStuck, quiet + silent + " twice"};
  if (probe.silent) return {StallVerdict::kUnknown, quiet + silent + "; asking again at the next sample"};
  quiet_since_ms_ = now_ms;
  return {};
}

StallJudgement StallRule::JudgeHeld(const ServerProbe& probe, uint64_t now_ms) {
  std::string held = "the kernel has held IO for " + Seconds(stalled_ms(now_ms)) + " without a completion; ";
  StallJudgement j;
  bool idle_server = probe.ops && probe.ops->count == 0;
  bool twice_idle = idle_server && idle_server_seen_;
  idle_server_seen_ = idle_server;
  if (probe.stopped) {
    j = {StallVerdict::kStuck, held + "rbd-nbd is stopped"};
  } else if (probe.silent) {
    j = {StallVerdict::kStuck, held + "rbd-nbd's admin socket does not answer (" + probe.error + ")"};
  } else if (twice_idle) {
    j = {StallVerdict::kStuck, held + "rbd-nbd has no librados op in flight for it"};
  } else if (idle_server) {
    j = {StallVerdict::kUnknown, held + "rbd-nbd has no librados op in flight; asking again at the next sample"};
  } else if (probe.ops) {
    j = {StallVerdict::kHeldByCluster, held + "the cluster holds it: " + DescribeOps(*probe.ops)};
  } else if (!probe.has_admin_socket) {
    j = {StallVerdict::kUnknown, held + "rbd-nbd has no admin socket to ask (started by an older nbdkeeper)"};
  } else {
    j = {StallVerdict::kUnknown, held + "rbd-nbd's admin socket: " + probe.error};
  }
  return j;
}

StallJudgement StallRule::Judge(const ServerProbe& probe, uint64_t now_ms) {
  StallJudgement j = stalled_ ? JudgeHeld(probe, now_ms) : JudgeIdle(probe, now_ms);
  if (j.verdict == StallVerdict::kStuck) {
    ++stuck_without_progress_;
    Restart();
  }
  return j;
}

}  // namespace nbdk
