// StallRule: the one owner of when a Connected rbd-nbd counts as stuck (it
// is then ended and re-attached as for a death, its lock broken) and when
// it is only waiting on a slow cluster (left alone, reported).
//
// The evidence, in order:
//  1. The device completes nothing: `completed` unchanged from one sample
//     to the next (netlink/nbd_sysfs.h). Completing anything restarts the
//     clock.
//  2. Quiet while the kernel holds IO (in_flight > 0) for the limit: the
//     server is asked why (supervisor/server_probe.h):
//     - stopped (SIGSTOP, a tracer):                      stuck;
//     - its admin socket takes the question, stays silent: stuck;
//     - librados ops in flight:  the cluster holds the IO. Never ended for
//       it: a new rbd-nbd would wait on the same OSDs. Reported.
//     - no librados op at two probes one sample apart:    stuck (it holds
//       the kernel's requests without asking the cluster for them);
//     - no admin socket (an older nbdkeeper's server), an unreadable
//       answer:                                           unknown, reported.
//  3. Quiet with nothing counted in flight for the limit: the server is
//     asked too, because `inflight` counts reads and writes only and a
//     flush the server never answers leaves it at 0 (seen in CI: a
//     SIGSTOPped server, a writer blocked in fsync). Only a stopped server
//     or a socket silent at two probes one sample apart is stuck here; an
//     answering one is idle, and is asked again after another limit.
//  4. Backoff: each stuck verdict without a completion since the previous
//     one doubles the limit (at most 8x); any completion resets it.
//
// Pure: no clock or file of its own; the Mapping feeds it.
#pragma once

#include <cstdint>
#include <string>

#include "netlink/nbd_sysfs.h"
#include "supervisor/server_probe.h"

namespace nbdk {

enum class StallVerdict {
  kHealthy,        // not stalled, or stalled shorter than the limit
  kHeldByCluster,  // stalled past the limit; the cluster holds the ops
  kUnknown,        // stalled past the limit; the server cannot tell
  kStuck,          // end it and re-attach
};

struct StallJudgement {
  StallVerdict verdict = StallVerdict::kHealthy;
  std::string reason;  // for the log, /status and the kill reason
};

class StallRule {
 public:
  explicit StallRule(uint64_t limit_ms) : base_limit_ms_(limit_ms) {}

  // A new server (map, attach, adoption): the clock starts again at the
  // next sample without a completion; the backoff stays until one.
  void Restart();
  // One sample of the device's counters at `now_ms`. True when the device
  // has been quiet (rules 2 and 3 above) for the limit and the server must
  // be probed now.
  bool Sample(const NbdIoCounters& counters, uint64_t now_ms);
  // The verdict on a probe that Sample() asked for.
  StallJudgement Judge(const ServerProbe& probe, uint64_t now_ms);

  uint64_t limit_ms() const;
  // How long the device has held IO without a completion (0: it has not).
  uint64_t stalled_ms(uint64_t now_ms) const;

 private:
  uint64_t quiet_ms(uint64_t now_ms) const;
  StallJudgement JudgeHeld(const ServerProbe& probe, uint64_t now_ms);
  StallJudgement JudgeIdle(const ServerProbe& probe, uint64_t now_ms);

  uint64_t base_limit_ms_;
  bool have_sample_ = false;
  uint64_t last_completed_ = 0;
  bool quiet_ = false;           // no completion since quiet_since_ms_
  uint64_t quiet_since_ms_ = 0;  // restarted by an idle server's answer too
  bool stalled_ = false;         // quiet and holding IO since stalled_since_ms_
  uint64_t stalled_since_ms_ = 0;
  bool idle_server_seen_ = false;        // the previous probe found no op
  bool silent_seen_ = false;             // the previous idle probe went unanswered
  uint32_t stuck_without_progress_ = 0;  // backoff exponent
};

}  // namespace nbdk
