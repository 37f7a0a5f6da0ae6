// Counters the Supervisor keeps for /metrics. Monotonic since daemon start.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "base/metrics.h"
#include "supervisor/mapping_state.h"

namespace nbdk {

struct SupervisorCounters {
  uint64_t maps_started = 0;
  uint64_t maps_succeeded = 0;
  uint64_t maps_failed = 0;
  uint64_t adoptions = 0;
  uint64_t deaths = 0;  // unplanned exits of a serving rbd-nbd
  uint64_t reattach_attempts = 0;
  uint64_t reattach_successes = 0;
  uint64_t reattach_failures = 0;
  uint64_t lock_break_failures = 0;
  uint64_t expirations = 0;
  uint64_t fencings = 0;  // re-attaches refused: another client has the image
  uint64_t link_dead_events = 0;
  uint64_t link_dead_kills = 0;         // alive server killed after LINK_DEAD
  uint64_t stuck_kills = 0;             // alive server killed as stuck (stall_rule.h)
  uint64_t stalls_held_by_cluster = 0;  // stalls the cluster held past the limit
  uint64_t io_timeout_write_failures = 0;
  uint64_t unmaps = 0;
  uint64_t detaches = 0;
};

struct TransitionCount {
  MappingState from;
  MappingState to;
  uint64_t count;
};

class TransitionCounter {
 public:
  void Record(MappingState from, MappingState to) { ++counts_[Index(from)][Index(to)]; }
  uint64_t Count(MappingState from, MappingState to) const { return counts_[Index(from)][Index(to)]; }
  // Every from->to pair seen at least once, in enum order.
  std::vector<TransitionCount> NonZero() const {
    std::vector<TransitionCount> out;
    for (int f = 0; f < kMappingStateCount; ++f) {
      for (int t = 0; t < kMappingStateCount; ++t) {
        if (counts_[f][t] > 0) {
          out.push_back({static_cast<MappingState>(f), static_cast<MappingState>(t), counts_[f][t]});
        }
      }
    }
    return out;
  }

 private:
  static int Index(MappingState s) { return static_cast<int>(s); }
  std::array<std::array<uint64_t, kMappingStateCount>, kMappingStateCount> counts_{};
};

struct SupervisorStats {
  SupervisorCounters counters;
  TransitionCounter transitions;
  // Seconds from an rbd-nbd's death to its re-attach on the same device:
  // how long the kernel held the device's IO (re-attaches measured here:
  // 2-18 s; the kernel's window is reattach_timeout_s, 300 by default).
  HistogramSeries reattach_seconds{{1, 2, 5, 10, 20, 30, 60, 120, 300}};
};

}  // namespace nbdk
