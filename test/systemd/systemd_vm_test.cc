// The shipped unit under systemd as PID 1 (runs in the systemd VM): installed
// exactly as docs/operate/systemd.md says, then each thing an operator
// relies on, with writers on an ext4 and a block volume throughout. The
// tests run in order and build on each other (one daemon, one set of
// volumes); the last one leaves the volumes staged for the power cut that
// cold-boot.sh makes next.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <thread>

#include "base/command.h"
#include "supervisor/child_scope.h"
#include "test/common/vm_command.h"
#include "test/systemd/systemd_vm_env.h"
#include "test/systemd/unit_control.h"
#include "test/systemd/written_volumes.h"

namespace nbdk::systemdtest {
namespace {

using namespace std::chrono_literals;
using vmtest::GetVolumeStatus;

class SystemdUnit : public SystemdVmTest {
 protected:
  // Both CSI volumes, staged through the unit's socket, with their writers.
  static WrittenVolumes& Staged() {
    static WrittenVolumes staged(Ceph(), kHealthPort);
    return staged;
  }
};

TEST_F(SystemdUnit, InstalledAsTheReadmeSaysItIsActiveOnlyOnceReady) {
  // The operator's own part: the cluster list, in ceph-csi's format.
  std::filesystem::create_directories(std::filesystem::path(kCephCsiConfig).parent_path());
  ASSERT_TRUE(vmtest::WriteCephCsiConfig(kCephCsiConfig, kCluster, Ceph()).ok());
  Result<std::string> block = MarkdownBlockAfter(std::string(NBDK_SOURCE_DIR "/") + kInstallPage, kInstallMarker);
  ASSERT_TRUE(block.ok()) << block.status().ToString();
  // The install commands run from a source tree with its build in
  // `build/`: one made of links to this tree and its build directory.
  const std::filesystem::path tree = "/root/nbdk-install";
  std::filesystem::remove_all(tree);
  std::filesystem::create_directories(tree);
  std::filesystem::create_directory_symlink(NBDK_BUILD_DIR, tree / "build");
  std::filesystem::create_directory_symlink(NBDK_SOURCE_DIR "/systemd", tree / "systemd");
  std::ofstream(tree / "install.sh") << *block;
  ASSERT_EQ(::chdir(tree.c_str()), 0);
  auto start = std::chrono::steady_clock::now();
  auto ran = vmtest::RunCommand({"bash", "-euo", "pipefail", "install.sh"}, /*merge_stderr=*/true);
  double install_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  ASSERT_EQ(ran->exit.code, 0) << "the install commands of " << kInstallPage << " failed:\n"
                               << *block << "\n"
                               << ran->stdout_text;

  // `enable --now` of a Type=notify unit returns once READY=1 came: the
  // daemon must answer as ready at that very moment.
  csi::v1::ProbeResponse probe;
  grpc::ClientContext ctx;
  ASSERT_TRUE(IdentityStub()->Probe(&ctx, {}, &probe).ok());
  EXPECT_TRUE(probe.ready().value()) << "active before the daemon was ready";
  auto props = UnitProperties(kUnit, {"Type", "ActiveState", "StatusText", "NRestarts",
                                      "ExecMainStartTimestampMonotonic", "ActiveEnterTimestampMonotonic"});
  ASSERT_TRUE(props.ok()) << props.status().ToString();
  EXPECT_EQ((*props)["Type"], "notify");
  EXPECT_EQ((*props)["ActiveState"], "active");
  EXPECT_EQ((*props)["NRestarts"], "0");
  const std::string status_text = (*props)["StatusText"];
  EXPECT_FALSE(status_text.empty()) << "no STATUS= from the daemon";
  Result<std::string> shown = Systemctl({"status", "--no-pager", kUnit});
  ASSERT_TRUE(shown.ok()) << shown.status().ToString();
  EXPECT_NE(shown->find("Status: \"" + status_text), std::string::npos) << *shown;
  double to_ready =
      (std::stod((*props)["ActiveEnterTimestampMonotonic"]) - std::stod((*props)["ExecMainStartTimestampMonotonic"])) /
      1e6;
  std::printf("[ install ] commands %.1f s; exec to READY=1 (active) %.2f s; STATUS=\"%s\"\n", install_s, to_ready,
              status_text.c_str());
}

TEST_F(SystemdUnit, StagesAndPublishesAnExt4AndABlockVolumeWithWriters) {
  auto node = NodeStub();
  Staged().StageAndPublish(*node);
  if (HasFatalFailure()) return;
  // Each rbd-nbd in a scope of its own (child scopes), not in the unit.
  for (const auto& [image, pid] : Staged().ServerPids()) {
    ASSERT_NE(pid, 0) << image;
    EXPECT_EQ(CgroupOf(pid), "/system.slice/" + ScopeUnitName(image)) << image;
  }
}

TEST_F(SystemdUnit, RestartKeepsEveryRbdNbdAndAdoptsIt) {
  auto before = Staged().ServerPids();
  auto old = StateOf(kUnit);
  ASSERT_TRUE(old.ok());
  Staged().ResetWriters();
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(Systemctl({"restart", kUnit}).ok());
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto now = StateOf(kUnit);
  ASSERT_TRUE(now.ok());
  EXPECT_NE(now->main_pid, old->main_pid);
  Staged().ExpectAdopted(before, "systemctl restart");
  std::printf("[ systemctl restart ] back (READY=1) in %.2f s\n", took);
  Staged().ExpectWritersUnharmed("systemctl restart");
}

TEST_F(SystemdUnit, SigkillOfTheDaemonIsRestartedAndItsChildrenAdopted) {
  auto before = Staged().ServerPids();
  auto old = StateOf(kUnit);
  ASSERT_TRUE(old.ok());
  Staged().ResetWriters();
  ASSERT_TRUE(Systemctl({"kill", "--kill-whom=main", "-s", "SIGKILL", kUnit}).ok());
  double back = WaitForNewMainPid(kUnit, old->main_pid, 60s);
  ASSERT_GE(back, 0) << "Restart= did not bring the daemon back";
  Staged().ExpectAdopted(before, "systemctl kill --kill-whom=main -s SIGKILL");
  std::printf("[ systemctl kill --kill-whom=main -s SIGKILL ] active again after %.2f s\n", back);
  Staged().ExpectWritersUnharmed("SIGKILL main");
}

// What `systemctl kill` does without --kill-whom: every process of the
// unit is killed. Each rbd-nbd is in a scope of its own (child scopes), not
// in the unit: it keeps serving and the restarted daemon adopts it.
TEST_F(SystemdUnit, SigkillOfTheWholeUnitLeavesRbdNbdServingInItsScope) {
  ASSERT_EQ(Staged().WaitConnected(30s).size(), Staged().volumes().size());
  auto before = Staged().ServerPids();
  auto old = StateOf(kUnit);
  ASSERT_TRUE(old.ok());
  Staged().ResetWriters();
  ASSERT_TRUE(Systemctl({"kill", "-s", "SIGKILL", kUnit}).ok());
  ASSERT_GE(WaitForNewMainPid(kUnit, old->main_pid, 60s), 0) << "Restart= did not bring the daemon back";
  Staged().ExpectAdopted(before, "systemctl kill -s SIGKILL (all)");
  Staged().ExpectWritersUnharmed("systemctl kill -s SIGKILL (all)");
}

// A daemon that aborts leaves no core file (issue 41 C1: its memory holds
// cephx keys and LUKS passphrases), even where the unit's LimitCORE=0 is
// overridden: it marks itself not dumpable. Cores are on for the test
// (core_pattern to a directory of its own), and an ordinary process that
// aborts in the same VM does leave one, so an empty directory means
// something.
TEST_F(SystemdUnit, AnAbortedDaemonLeavesNoCoreFileEvenWithCoresAllowed) {
  const std::filesystem::path cores = "/var/tmp/nbdk-cores";
  std::filesystem::remove_all(cores);
  std::filesystem::create_directories(cores);
  auto read_pattern = vmtest::RunCommand({"cat", "/proc/sys/kernel/core_pattern"});
  ASSERT_TRUE(read_pattern.ok());
  const std::string old_pattern = read_pattern->stdout_text;
  auto set_pattern = [](const std::string& pattern) {
    std::ofstream out("/proc/sys/kernel/core_pattern");
    out << pattern;
    out.close();
    return out.good();
  };
  // PR_SET_DUMPABLE keeps a core away only while fs.suid_dumpable is 0
  // (Debian's default; systemd-coredump's sysctl sets 2, and then only
  // the unit's LimitCORE=0, which systemd-coredump honours, does).
  auto suid_dumpable = vmtest::RunCommand({"cat", "/proc/sys/fs/suid_dumpable"});
  ASSERT_TRUE(suid_dumpable.ok());
  ASSERT_EQ(suid_dumpable->stdout_text, "0\n") << "this VM dumps non-dumpable processes: the test would prove nothing";
  ASSERT_TRUE(set_pattern(cores.string() + "/core.%p"));
  const std::filesystem::path drop_in = "/run/systemd/system/nbdkeeperd.service.d/nbdk-test-cores.conf";
  // Whatever the test's end, the VM's later tests find cores and limits
  // as they were.
  struct Restore {
    std::function<void()> undo;
    ~Restore() { undo(); }
  } restore{[&] {
    set_pattern(old_pattern);
    if (std::filesystem::remove(drop_in)) (void)Systemctl({"daemon-reload"});
  }};
  auto core_of = [&](pid_t pid) { return std::filesystem::exists(cores / ("core." + std::to_string(pid))); };

  pid_t ordinary = ::fork();
  ASSERT_GE(ordinary, 0);
  if (ordinary == 0) {
    struct rlimit unlimited = {RLIM_INFINITY, RLIM_INFINITY};
    ::setrlimit(RLIMIT_CORE, &unlimited);
    ::abort();
  }
  int status = 0;
  ASSERT_EQ(::waitpid(ordinary, &status, 0), ordinary);
  ASSERT_TRUE(WIFSIGNALED(status) && WCOREDUMP(status) && core_of(ordinary))
      << "an ordinary process left no core: the test could not tell";

  // Only the daemon's own PR_SET_DUMPABLE stands between its memory and a core.
  std::filesystem::create_directories(drop_in.parent_path());
  std::ofstream(drop_in) << "[Service]\nLimitCORE=infinity\n";
  ASSERT_TRUE(Systemctl({"daemon-reload"}).ok());
  auto before = Staged().ServerPids();
  ASSERT_TRUE(Systemctl({"restart", kUnit}).ok());
  Staged().ExpectAdopted(before, "systemctl restart with LimitCORE=infinity");
  auto old = StateOf(kUnit);
  ASSERT_TRUE(old.ok());
  auto limits =
      vmtest::RunCommand({"grep", "Max core file size", "/proc/" + std::to_string(old->main_pid) + "/limits"});
  ASSERT_TRUE(limits.ok());
  EXPECT_NE(limits->stdout_text.find("unlimited"), std::string::npos) << limits->stdout_text;
  std::filesystem::remove(drop_in);
  ASSERT_TRUE(Systemctl({"daemon-reload"}).ok());

  Staged().ResetWriters();
  ASSERT_TRUE(Systemctl({"kill", "--kill-whom=main", "-s", "SIGABRT", kUnit}).ok());
  ASSERT_GE(WaitForNewMainPid(kUnit, old->main_pid, 60s), 0) << "Restart= did not bring the daemon back";
  Staged().ExpectAdopted(before, "systemctl kill --kill-whom=main -s SIGABRT");
  EXPECT_FALSE(core_of(old->main_pid)) << "the aborted daemon left a core";
  size_t files = std::distance(std::filesystem::directory_iterator(cores), std::filesystem::directory_iterator());
  EXPECT_EQ(files, 1u) << "a core besides the ordinary process's";
  auto journal = JournalJson(kUnit);
  ASSERT_TRUE(journal.ok());
  bool reported = false;
  for (const std::string& e : *journal) reported |= e.find("fatal signal 6 (ABRT)") != std::string::npos;
  EXPECT_TRUE(reported) << "the abort left no report in the journal";
  std::printf("[ SIGABRT main ] an ordinary process's abort left core.%d; the daemon's (core limit %s) left none\n",
              ordinary, limits->stdout_text.find("unlimited") != std::string::npos ? "unlimited" : "not unlimited");
  Staged().ExpectWritersUnharmed("SIGABRT main");
}

TEST_F(SystemdUnit, WatchdogKillsAStoppedDaemonAndRbdNbdOutlivesIt) {
  auto props = UnitProperties(kUnit, {"WatchdogUSec", "TimeoutAbortUSec"});
  ASSERT_TRUE(props.ok());
  auto before = Staged().ServerPids();
  auto old = StateOf(kUnit);
  ASSERT_TRUE(old.ok());
  Staged().ResetWriters();
  ASSERT_EQ(::kill(old->main_pid, SIGSTOP), 0);
  double back = WaitForNewMainPid(kUnit, old->main_pid, 180s);
  ASSERT_GE(back, 0) << "the watchdog did not replace the stopped daemon";
  Staged().ExpectAdopted(before, "watchdog");
  auto journal = JournalJson(kUnit);
  ASSERT_TRUE(journal.ok());
  bool timeout_logged = false;
  for (const std::string& e : *journal) timeout_logged |= e.find("Watchdog timeout") != std::string::npos;
  EXPECT_TRUE(timeout_logged) << "systemd did not log a watchdog timeout for the unit";
  std::printf("[ watchdog ] SIGSTOP to ready again %.1f s (WatchdogSec %s, TimeoutAbortSec %s)\n", back,
              (*props)["WatchdogUSec"].c_str(), (*props)["TimeoutAbortUSec"].c_str());
  Staged().ExpectWritersUnharmed("watchdog");
}

TEST_F(SystemdUnit, KilledRbdNbdIsReattachedIntoItsScope) {
  const CsiVolume& v = Ext4Volume();
  auto before = Staged().WaitConnected(30s);
  ASSERT_EQ(before.size(), Staged().volumes().size());
  Staged().ResetWriters();
  ASSERT_EQ(::kill(before.at(v.image).pid, SIGKILL), 0);
  auto start = std::chrono::steady_clock::now();
  std::optional<vmtest::VolumeStatus> now;
  WaitUntil(
      [&] {
        now = GetVolumeStatus(kHealthPort, v.image);
        return now && now->state == "Connected" && now->pid != before.at(v.image).pid;
      },
      120s);
  ASSERT_TRUE(now && now->state == "Connected") << "not re-attached";
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(now->device, before.at(v.image).device);
  // The move into the scope follows the spawn.
  std::string scope = "/" + ScopeUnitName(v.image);
  WaitUntil([&] { return CgroupOf(now->pid).ends_with(scope); }, 10s);
  EXPECT_TRUE(CgroupOf(now->pid).ends_with(scope)) << "the new rbd-nbd is not in its scope";
  std::printf("[ kill -9 rbd-nbd ] re-attached in %.2f s, new pid %d in %s\n", took, now->pid,
              CgroupOf(now->pid).c_str());
  Staged().ExpectWritersUnharmed("kill -9 rbd-nbd");
}

TEST_F(SystemdUnit, StopThenStartKeepsTheChildrenServing) {
  ASSERT_EQ(Staged().writers().size(), Staged().volumes().size());
  auto before = Staged().ServerPids();
  Staged().ResetWriters();
  ASSERT_TRUE(Systemctl({"stop", kUnit}).ok());
  auto stopped = StateOf(kUnit);
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(stopped->active_state, "inactive");
  uint64_t writes_at_stop = Staged().writers().begin()->second->writes();
  std::this_thread::sleep_for(3s);
  for (const auto& [image, pid] : before) EXPECT_EQ(::kill(pid, 0), 0) << image << "'s rbd-nbd died on stop";
  EXPECT_GT(Staged().writers().begin()->second->writes(), writes_at_stop) << "IO stopped while the daemon was stopped";
  ASSERT_TRUE(Systemctl({"start", kUnit}).ok());
  Staged().ExpectAdopted(before, "systemctl stop; start");
  Staged().ExpectWritersUnharmed("systemctl stop; start");
}

// The daemon's events are in the journal natively: fields an operator can
// filter on (journalctl -u nbdkeeperd VOLUME=sd-ext4 EVENT=...).
TEST_F(SystemdUnit, JournalHoldsTheDaemonsEventsWithFields) {
  auto journal = JournalJson(kUnit);
  ASSERT_TRUE(journal.ok()) << journal.status().ToString();
  size_t native = 0, for_volume = 0, with_state = 0, warnings_for_volume = 0;
  const std::string volume_field = "\"VOLUME\":\"" + Ext4Volume().image + "\"";
  for (const std::string& e : *journal) {
    if (e.find("\"SYSLOG_IDENTIFIER\":\"nbdkeeperd\"") == std::string::npos) continue;
    if (e.find("\"EVENT\":") == std::string::npos) continue;
    ++native;
    if (e.find(volume_field) == std::string::npos) continue;
    ++for_volume;
    with_state += e.find("\"STATE\":") != std::string::npos;
    warnings_for_volume +=
        e.find("\"PRIORITY\":\"4\"") != std::string::npos || e.find("\"PRIORITY\":\"3\"") != std::string::npos;
  }
  std::printf(
      "[ journal ] %zu entries for the unit, %zu with EVENT=, %zu with VOLUME=%s (%zu with STATE=, %zu "
      "warnings or errors)\n",
      journal->size(), native, for_volume, Ext4Volume().image.c_str(), with_state, warnings_for_volume);
  EXPECT_GT(native, 0u) << "no native journal entries (EVENT=) from the daemon";
  EXPECT_GT(for_volume, 0u);
  EXPECT_GT(with_state, 0u);
  EXPECT_GT(warnings_for_volume, 0u) << "the killed rbd-nbd left no warning with the volume's field";
}

// Leaves both CSI volumes staged and published with data on them, and one
// volume mapped and persisted by nbdkeeperctl, for cold-boot.sh's power
// cut. The agent must not clean them up after this job.
TEST_F(SystemdUnit, LeavesVolumesStagedForAPowerCut) {
  Staged().ExpectWritersUnharmed("before the power cut");
  for (auto& [image, w] : Staged().writers()) w->Stop();
  for (const CsiVolume* v : Staged().volumes()) {
    Status s = WriteMarker(v->DataPath(), v->block, MarkerText(v->image));
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  ASSERT_TRUE(vmtest::CreateImage(Ceph(), kCtlImage, 64).ok());
  CtlRun map = Ctl({"map", Ceph().pool + "/" + kCtlImage, "--cluster", kCluster, "--id", Ceph().user, "--mount",
                    kCtlMount, "--persist"});
  ASSERT_EQ(map.exit, 0) << map.output;
  Status s = WriteMarker(std::string(kCtlMount) + "/marker", false, MarkerText(kCtlImage));
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::ofstream("/run/nbdk-vm/keep-devices").close();
}

}  // namespace
}  // namespace nbdk::systemdtest
