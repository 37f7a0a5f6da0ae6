// chaos_run's command line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace nbdk::chaos {

struct ChaosOptions {
  uint64_t seed = 0;
  bool seed_given = false;
  // How many injections of each kind (shuffled into one seeded schedule).
  int child_kills = 20;  // kill -9 of one rbd-nbd
  int double_kills = 2;  // kill -9 of two rbd-nbd at once
  int stops = 2;         // kill -STOP of one rbd-nbd for 1-3 s, then -CONT
  int daemon_kills = 2;  // SIGKILL of nbdkeeperd, then a restart
  int daemon_terms = 1;  // SIGTERM of nbdkeeperd, then a restart
  int down_kills = 0;    // SIGKILL of nbdkeeperd, kill -9 of one rbd-nbd, then a restart
  int stage_kills = 1;   // kill -9 of one rbd-nbd while another volume's NodeStage is in flight
  // Pause after one injection has healed and before the next (uniform).
  int min_gap_ms = 500, max_gap_ms = 3000;
  int fio_mib = 32;  // the region each fio job writes and verifies
  // Each fio job's IO per second, reads and writes alike; 0: flat out. A
  // paced writer still has IO in flight at a kill and held through the
  // outage, but leaves the CPU to the heal it waits for.
  int fio_rate_iops = 0;
  std::string report_path;  // default: the VM share's chaos/report.json; "-": stdout
};

std::string ChaosUsage();
Result<ChaosOptions> ParseChaosOptions(const std::vector<std::string>& args);

}  // namespace nbdk::chaos
