// The chaos run's verdict and figures: a JSON file and a table on stdout.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "test/chaos/keeper.h"

namespace nbdk::chaos {

struct VolumeOutcome {
  std::string id, access, device;
  uint64_t write_kib = 0, verify_kib = 0;
  int fio_error = 0;
  bool verify_failed = false, io_failed = false, fio_ended_early = false;
  double max_clat_s = 0;
  std::string fsck = "not run";  // "ok", "n/a" (block), or what failed
};

struct ChaosReport {
  uint64_t seed = 0;
  double duration_s = 0;
  std::map<std::string, int> injections;  // by kind
  std::vector<double> child_heal_s;       // kill -9 of an rbd-nbd -> Connected again
  std::vector<double> daemon_heal_s;      // daemon launch -> ready with every volume Connected (adopted)
  std::vector<double> down_heal_s;        // the same, one rbd-nbd having died while no daemon ran
  std::vector<VolumeOutcome> volumes;
  std::vector<Incarnation> incarnations;
  uint64_t rss_kib_all_mapped = 0;  // right after every volume was staged and published
  std::vector<std::string> failures;

  bool passed() const { return failures.empty(); }
  double cpu_s() const;
  uint64_t io_errors() const;
  uint64_t verify_failures() const;
};

// The value below which `p` (0..1) of `values` lie (nearest rank); 0 if empty.
double Percentile(std::vector<double> values, double p);

std::string ToJson(const ChaosReport& report);
Status WriteJson(const ChaosReport& report, const std::string& path);
void PrintTable(const ChaosReport& report);

}  // namespace nbdk::chaos
