// Test-only: scale_bench's output - a row per N and K, its legend, and the
// daemon's per-thread figures gathered during the run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "test/bench/proc_figures.h"

namespace nbdk::bench {

struct ScaleRow {
  int n = 0, k = 0;
  double stage_median = 0, stage_max = 0, stage_all = 0;
  double daemon_rss = 0, rbd_nbd_rss = 0;
  double heal_median = 0, heal_max = 0, heal_all = 0;
  // CPU seconds during the mass heal: the daemon, the new rbd-nbd processes
  // (so far), and every CPU of the machine busy (the node's whole cost);
  // the part of the daemon's that answered the benchmark's own GET /status
  // polls (their number times one's cost, measured before the kill).
  double heal_daemon_cpu = 0, heal_children_cpu = 0, heal_node_cpu = 0, heal_poll_cpu = 0;
  double restart_all = 0, longest_write = 0;
  size_t unhealed = 0;  // volumes not Connected within give_up_s (heal or restart)
  uint64_t errors = 0;
};

// A K as the table shows it: "inf" for no bound, "dflt" for the daemon's own.
inline std::string KName(int k) { return k < 0 ? "dflt" : k == 0 ? "inf" : std::to_string(k); }

inline void PrintHeader() {
  std::printf("%4s %4s | %-22s | %-15s | %-9s | %-30s | %-13s | %s\n", "N", "K", "stage med/max/all s",
              "RSS daemon/rbd", "restart s", "mass heal med/max/all s (max/med)", "daemon% rbd/node",
              "longest write, errors");
  std::fflush(stdout);
}

inline void PrintRow(const ScaleRow& r) {
  double daemon = std::max(0.0, r.heal_daemon_cpu - r.heal_poll_cpu);
  double of_children = daemon / std::max(1e-9, daemon + r.heal_children_cpu) * 100;
  double of_node = daemon / std::max(1e-9, r.heal_node_cpu) * 100;
  std::printf(
      "%4d %4s | %6.2f %6.2f %7.2f | %5.1f %5.1f MiB | %9.2f | %6.2f %6.2f %7.2f (%4.2fx) | %5.1f%% %5.1f%% | "
      "%6.2f s, %llu",
      r.n, KName(r.k).c_str(), r.stage_median, r.stage_max, r.stage_all, r.daemon_rss, r.rbd_nbd_rss, r.restart_all,
      r.heal_median, r.heal_max, r.heal_all, r.heal_max / std::max(1e-9, r.heal_median), of_children, of_node,
      r.longest_write, static_cast<unsigned long long>(r.errors));
  if (r.unhealed > 0) std::printf("  NOT HEALED: %zu volume(s)", r.unhealed);
  std::printf("\n");
  std::fflush(stdout);
}

inline void PrintLegend() {
  std::printf(
      "K = --max-concurrent-attaches (dflt: the daemon's default, inf: 0, no bound); stage and RSS are "
      "measured under the first K\n");
  std::printf(
      "daemon%% = the daemon's CPU during the mass heal, less what the benchmark's GET /status polls cost it "
      "(their number x one's CPU, measured before the kill) / rbd: (that + the new rbd-nbd processes' CPU so "
      "far), node: every CPU's busy time in the VM (Ceph, writers, kernel included)\n");
}

// Every thread's wakeups, sampled per N (idle before staging, and with the
// writers running), and the daemon's CPU per thread over each mass heal.
struct ThreadFigures {
  static constexpr double kWakeupWindowS = 5;
  std::vector<std::pair<std::string, std::vector<ThreadWakeups>>> wakeups;
  std::vector<std::pair<std::string, std::pair<std::map<std::string, double>, std::map<std::string, double>>>> heal_cpu;

  void Print() const {
    for (const auto& [when, threads] : wakeups) {
      std::printf("the daemon's wakeups per thread over %.0f s, %s (main = the event loop):\n", kWakeupWindowS,
                  when.c_str());
      PrintThreadWakeups(threads, "  ");
    }
    for (const auto& [when, cpu] : heal_cpu) {
      std::printf("the daemon's CPU per thread during the mass heal, %s (the /status polls included):\n", when.c_str());
      PrintThreadCpu(cpu.first, cpu.second, "  ");
    }
    std::fflush(stdout);
  }
};

}  // namespace nbdk::bench
