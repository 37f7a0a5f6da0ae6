#include "test/chaos/chaos_scenario.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "base/command.h"
#include "test/chaos/end_checks.h"
#include "test/chaos/heal_watch.h"
#include "test/common/http_client.h"
#include "test/common/vm_command.h"

namespace nbdk::chaos {
namespace {

namespace fs = std::filesystem;

// The harness mounts its writable 9p share here (test/vm/guest-init.sh):
// what is written there outlives the VM.
constexpr char kVmShare[] = "/run/nbdk-vm/share";

std::string InjectionName(Injection kind) {
  switch (kind) {
    case Injection::kChildKill:
      return "rbd-nbd kill -9";
    case Injection::kDoubleKill:
      return "two rbd-nbd kill -9";
    case Injection::kStop:
      return "rbd-nbd kill -STOP";
    case Injection::kDaemonKill:
      return "daemon SIGKILL";
    case Injection::kDaemonTerm:
      return "daemon SIGTERM";
    case Injection::kDownKill:
      return "kill while daemon down";
    case Injection::kStageKill:
      return "kill during NodeStage";
  }
  return "?";
}

}  // namespace

ChaosScenario::ChaosScenario(ChaosOptions options) : options_(std::move(options)), keeper_(root_, ceph_) {
  if (!options_.seed_given) options_.seed = std::random_device{}() ^ static_cast<uint64_t>(::time(nullptr));
  rng_.seed(options_.seed);
  report_.seed = options_.seed;
}

int ChaosScenario::Run() {
  Say("chaos_run: seed " + std::to_string(options_.seed) + " (repeat the schedule with --seed " +
      std::to_string(options_.seed) + ")");
  if (!ceph_.complete()) {
    Fail("not inside the test VM (CEPH_CONF, NBDK_CEPH_* unset): test/vm/vm-run -- " + std::string(CHAOS_RUN_PATH));
  } else if (Status s = SetUp(); !s.ok()) {
    Fail("set-up: " + s.ToString());
  } else {
    RunSchedule();
  }
  Finish();
  report_.duration_s = std::chrono::duration<double>(Clock::now() - start_).count();
  SaveReportAndLogs();
  PrintTable(report_);
  return report_.passed() ? 0 : 1;
}

void ChaosScenario::Say(const std::string& line) {
  std::printf("[%6.1f s] %s\n", std::chrono::duration<double>(Clock::now() - start_).count(), line.c_str());
  std::fflush(stdout);
}

void ChaosScenario::Fail(const std::string& what) {
  report_.failures.push_back(what);
  Say("FAILED: " + what);
}

double ChaosScenario::RandomSeconds(double min, double max) {
  return std::uniform_real_distribution<double>(min, max)(rng_);
}

std::vector<ChaosVolume*> ChaosScenario::AllVolumes() {
  std::vector<ChaosVolume*> all;
  for (ChaosVolume& v : volumes_) all.push_back(&v);
  if (!spare_.id.empty()) all.push_back(&spare_);
  return all;
}

ChaosVolume& ChaosScenario::RandomVolume() {
  return volumes_[std::uniform_int_distribution<size_t>(0, volumes_.size() - 1)(rng_)];
}

std::vector<std::string> ChaosScenario::VolumeIds() const {
  std::vector<std::string> ids;
  for (const ChaosVolume& v : volumes_) ids.push_back(v.id);
  return ids;
}

Status ChaosScenario::SetUp() {
  fs::remove_all(root_);
  fs::create_directories(root_ + "/staging");
  fs::create_directories(root_ + "/pods");  // kubelet makes a target's parent
  NBDK_RETURN_IF_ERROR(vmtest::WriteCephCsiConfig(root_ + "/ceph-csi-config.json", kClusterId, ceph_));
  NBDK_RETURN_IF_ERROR(keeper_.Start(0));
  Say("nbdkeeperd pid " + std::to_string(keeper_.pid()) + " ready");
  volumes_.push_back(MakeVolume(root_, "chaos-ext4", Access::kExt4));
  volumes_.push_back(MakeVolume(root_, "chaos-xfs", Access::kXfs));
  volumes_.push_back(MakeVolume(root_, "chaos-block", Access::kBlock));
  spare_ = MakeVolume(root_, "chaos-spare", Access::kExt4);
  std::vector<ChaosVolume*> images;
  for (ChaosVolume& v : volumes_) images.push_back(&v);
  if (options_.stage_kills > 0) images.push_back(&spare_);
  auto listed = vmtest::RunCommand(ceph_.Rbd({"ls", ceph_.pool}));
  if (!listed.ok()) return listed.status();
  for (ChaosVolume* v : images) {
    // A leftover of an interrupted run in the same VM goes first.
    if (("\n" + listed->stdout_text).find("\n" + v->id + "\n") != std::string::npos) {
      NBDK_RETURN_IF_ERROR(vmtest::RemoveImage(ceph_, v->id));
    }
    NBDK_RETURN_IF_ERROR(vmtest::CreateImage(ceph_, v->id, v->image_mib()));
    v->created = true;
  }
  for (ChaosVolume& v : volumes_) {
    auto t0 = Clock::now();
    NBDK_RETURN_IF_ERROR(Stage(keeper_.node(), ceph_, v));
    v.staged = true;
    NBDK_RETURN_IF_ERROR(Publish(keeper_.node(), v));
    v.published = true;
    auto seen = SeeServer(keeper_.health_port(), v.id);
    if (!seen.ok()) return seen.status();
    v.device = seen->device;
    devices_.push_back(v.device);
    auto fio =
        FioJob::Start(v.id, v.fio_path(), options_.fio_mib, options_.fio_rate_iops, root_ + "/fio-" + v.id + ".json");
    if (!fio.ok()) return fio.status();
    v.fio = std::move(*fio);
    char line[200];
    std::snprintf(line, sizeof(line), "%s (%s) staged + published in %.1f s on %s, rbd-nbd pid %d; fio started",
                  v.id.c_str(), AccessName(v.access).c_str(), std::chrono::duration<double>(Clock::now() - t0).count(),
                  v.device.c_str(), seen->pid);
    Say(line);
  }
  // Let every fio lay out its file and get going before the first kill.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  if (!FioAllRunning()) return Status::Internal("a fio job stopped before the first injection");
  report_.rss_kib_all_mapped = keeper_.SampleRss();
  Say("every volume mapped: nbdkeeperd RSS " + std::to_string(report_.rss_kib_all_mapped) + " KiB");
  return Status::Ok();
}

bool ChaosScenario::FioAllRunning() {
  bool all = true;
  for (ChaosVolume& v : volumes_) {
    if (v.fio && !v.fio->Running()) {
      Fail("fio on " + v.id + " stopped during the run (an IO error or a verify failure; see its report)");
      all = false;
    }
  }
  return all;
}

void ChaosScenario::RunSchedule() {
  std::vector<Injection> schedule;
  auto add = [&schedule](Injection kind, int n) { schedule.insert(schedule.end(), static_cast<size_t>(n), kind); };
  add(Injection::kChildKill, options_.child_kills);
  add(Injection::kDoubleKill, options_.double_kills);
  add(Injection::kStop, options_.stops);
  add(Injection::kDaemonKill, options_.daemon_kills);
  add(Injection::kDaemonTerm, options_.daemon_terms);
  add(Injection::kDownKill, options_.down_kills);
  add(Injection::kStageKill, options_.stage_kills);
  std::shuffle(schedule.begin(), schedule.end(), rng_);
  for (size_t i = 0; i < schedule.size(); ++i) {
    double gap = RandomSeconds(options_.min_gap_ms / 1000.0, options_.max_gap_ms / 1000.0);
    std::this_thread::sleep_for(std::chrono::duration<double>(gap));
    if (!FioAllRunning()) return;
    Say("#" + std::to_string(i + 1) + "/" + std::to_string(schedule.size()) + " " + InjectionName(schedule[i]));
    if (Status s = Inject(schedule[i]); !s.ok()) {
      Fail(InjectionName(schedule[i]) + ": " + s.ToString());
      return;
    }
    ++report_.injections[InjectionName(schedule[i])];
  }
  // IO after the last heal, so that fio has verified what it wrote across it.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  FioAllRunning();
}

Status ChaosScenario::Inject(Injection kind) {
  switch (kind) {
    case Injection::kChildKill:
      return KillChildren(1);
    case Injection::kDoubleKill:
      return KillChildren(2);
    case Injection::kStop:
      return StopChild();
    case Injection::kDaemonKill:
      return RestartDaemon(SIGKILL, false);
    case Injection::kDaemonTerm:
      return RestartDaemon(SIGTERM, false);
    case Injection::kDownKill:
      return RestartDaemon(SIGKILL, true);
    case Injection::kStageKill:
      return KillDuringStage();
  }
  return Status::Internal("unknown injection");
}

void ChaosScenario::Finish() {
  Say("end: stopping fio, then unpublish + unstage through CSI, fsck, leftovers");
  for (ChaosVolume& v : volumes_) {
    VolumeOutcome out{.id = v.id, .access = AccessName(v.access), .device = v.device};
    if (v.fio) {
      auto r = v.fio->Stop();
      if (!r.ok()) {
        Fail("fio on " + v.id + ": " + r.status().ToString());
      } else {
        out.write_kib = r->write_kib;
        out.verify_kib = r->verify_kib;
        out.fio_error = r->error;
        out.verify_failed = r->verify_failed();
        out.io_failed = r->io_failed();
        out.max_clat_s = r->max_clat_s;
        if (r->error != 0) {
          Fail("fio on " + v.id + " ended with error " + std::to_string(r->error) + " (fio " + r->exit + ")");
        }
        if (r->verify_kib == 0) Fail("fio on " + v.id + " verified nothing");
      }
    }
    report_.volumes.push_back(out);
  }
  if (!keeper_.running()) {
    if (Status s = keeper_.Start(volumes_.size()); !s.ok()) Fail("restart for the clean-up: " + s.ToString());
  }
  if (keeper_.running()) UnpublishAndUnstage();
  report_.incarnations = keeper_.incarnations();
  CheckCounters();
  if (spare_.created) report_.volumes.push_back({.id = spare_.id, .access = AccessName(spare_.access), .device = ""});
  std::vector<ChaosVolume*> all = AllVolumes();
  for (size_t i = 0; i < report_.volumes.size(); ++i) {
    ChaosVolume& v = *all[i];
    if (!v.created || v.staged) continue;
    Status s = CheckFilesystem(ceph_, v);
    report_.volumes[i].fsck = v.access == Access::kBlock ? "n/a" : s.ok() ? "ok" : s.message();
    if (!s.ok()) {
      Fail("fsck: " + s.ToString());
    } else if (v.access != Access::kBlock) {
      Say(v.id + ": " + AccessName(v.access) + " checked clean after unstage");
    }
  }
  std::vector<std::string> images;
  for (const ChaosVolume* v : AllVolumes()) {
    if (v->created) images.push_back(v->id);
  }
  for (const std::string& left :
       FindLeftovers(ceph_, images, devices_, root_, keeper_.key_dir(), keeper_.journal_dir())) {
    Fail("left behind: " + left);
  }
  for (const std::string& image : images) {
    if (Status s = vmtest::RemoveImage(ceph_, image); !s.ok()) Fail(s.ToString());
  }
}

// Through CSI, as kubelet would, then the final SIGTERM of the daemon.
void ChaosScenario::UnpublishAndUnstage() {
  for (ChaosVolume& v : volumes_) {
    if (!v.published) continue;
    if (Status s = Unpublish(keeper_.node(), v); !s.ok()) {
      Fail(s.ToString());
    } else {
      v.published = false;
    }
  }
  for (ChaosVolume* v : AllVolumes()) {
    if (!v->staged) continue;
    if (Status s = Unstage(keeper_.node(), *v); !s.ok()) {
      Fail(s.ToString());
    } else {
      v->staged = false;
    }
  }
  auto metrics = test::HttpGet(keeper_.health_port(), "/metrics");
  if (MetricValue(metrics.body, "nbdkeeper_staged_volumes").value_or(-1) != 0) {
    Fail("after unstaging everything /metrics does not show nbdkeeper_staged_volumes 0");
  }
  if (Status s = keeper_.Stop(SIGTERM, "end"); !s.ok()) Fail(s.ToString());
  if (!keeper_.current().exit_ok) Fail("nbdkeeperd did not exit 0 on the final SIGTERM");
  Say("every volume unpublished and unstaged; nbdkeeperd stopped");
}

// Each incarnation counts from zero: the child deaths the run injected
// while it ran must be its deaths and its re-attaches, the volumes running
// at its start its adoptions, and nothing may have expired.
void ChaosScenario::CheckCounters() {
  for (const Incarnation& i : report_.incarnations) {
    std::string who = "nbdkeeperd pid " + std::to_string(i.pid) + " (ended by " + i.ended_by + ")";
    if (!i.counters) {
      Fail(who + ": no /metrics before it was stopped");
      continue;
    }
    auto expect = [&](const char* what, double seen, uint64_t want) {
      if (seen != static_cast<double>(want)) {
        Fail(who + ": " + what + " " + std::to_string(static_cast<long long>(seen)) + ", expected " +
             std::to_string(want));
      }
    };
    expect("nbdkeeper_rbd_nbd_deaths_total", i.counters->deaths, i.child_deaths_injected);
    expect("nbdkeeper_reattaches_total", i.counters->reattaches, i.child_deaths_injected);
    expect("nbdkeeper_adoptions_total", i.counters->adoptions, i.adoptions_expected);
    expect("nbdkeeper_expirations_total", i.counters->expirations, 0);
  }
}

void ChaosScenario::SaveReportAndLogs() {
  // The share outlives the VM (under CTest: <build>/vm-state/share).
  std::string dir = fs::is_directory(kVmShare) ? std::string(kVmShare) + "/chaos" : root_;
  std::error_code ec;
  fs::create_directories(dir, ec);
  fs::copy_file(keeper_.log_path(), dir + "/nbdkeeperd.log", fs::copy_options::overwrite_existing, ec);
  std::string log = ec ? keeper_.log_path() : dir + "/nbdkeeperd.log";
  if (options_.report_path == "-") {
    std::printf("%s", ToJson(report_).c_str());
    Say("daemon log: " + log);
    return;
  }
  std::string report = options_.report_path.empty() ? dir + "/report.json" : options_.report_path;
  if (Status s = WriteJson(report_, report); !s.ok()) Fail(s.ToString());
  Say("report: " + report + "; daemon log: " + log);
}

}  // namespace nbdk::chaos
