// The chaos run: volumes staged and published through CSI with a verifying
// fio job on each, a seeded schedule of injections (rbd-nbd kills and
// stops, daemon kills and restarts, a kill during another volume's stage),
// each waited out until the daemon has healed, then the end checks and the
// report. Set-up and end checks in chaos_scenario.cc, the injections in
// injections.cc.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "test/chaos/chaos_options.h"
#include "test/chaos/chaos_report.h"
#include "test/chaos/chaos_volume.h"
#include "test/chaos/keeper.h"
#include "test/common/vm_volume.h"

namespace nbdk::chaos {

enum class Injection { kChildKill, kDoubleKill, kStop, kDaemonKill, kDaemonTerm, kDownKill, kStageKill };

class ChaosScenario {
 public:
  explicit ChaosScenario(ChaosOptions options);
  // Exit status: 0 only if every check passed.
  int Run();

 private:
  using Clock = std::chrono::steady_clock;

  Status SetUp();
  // The seeded schedule; stops at the first injection that fails.
  void RunSchedule();
  Status Inject(Injection kind);
  // Stops fio, unpublishes and unstages, stops the daemon, checks
  // filesystems, counters and leftovers, removes the images.
  void Finish();
  void UnpublishAndUnstage();
  void CheckCounters();
  void SaveReportAndLogs();

  // injections.cc
  Status KillChildren(size_t count);
  Status StopChild();
  Status RestartDaemon(int signum, bool kill_one_while_down);
  Status KillDuringStage();

  void Say(const std::string& line);
  void Fail(const std::string& what);
  bool FioAllRunning();
  ChaosVolume& RandomVolume();
  // The published volumes and the spare.
  std::vector<ChaosVolume*> AllVolumes();
  std::vector<std::string> VolumeIds() const;
  // Seconds in [min, max), from the run's generator.
  double RandomSeconds(double min, double max);

  ChaosOptions options_;
  std::mt19937_64 rng_;
  const Clock::time_point start_ = Clock::now();
  const vmtest::VmCeph ceph_ = vmtest::VmCeph::FromEnv();
  const std::string root_ = "/run/nbdk-chaos";
  Keeper keeper_;
  std::vector<ChaosVolume> volumes_;  // published, with fio
  ChaosVolume spare_;                 // staged and unstaged during the run, never published
  std::vector<std::string> devices_;  // every /dev/nbdX seen, for the leftover check
  ChaosReport report_;
};

}  // namespace nbdk::chaos
