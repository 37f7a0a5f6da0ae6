// Supervisor: unplanned death, re-attach, backoff, expiry, LINK_DEAD, many
// mappings, adoption through a pidfd.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include "test/supervisor/supervisor_fixture.h"

extern char** environ;

namespace nbdk {
namespace {

TEST_F(SupervisorTest, DeathReattachesTheSameDeviceWithTheSameCookieAfterBreakingTheLock) {
  Behave("img1.map", "device=/dev/nbd3");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  int old_pid = Snap("vol1").pid;
  ASSERT_EQ(kill(old_pid, SIGKILL), 0);
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", 1); }));

  auto s = Snap("vol1");
  EXPECT_NE(s.pid, old_pid);
  EXPECT_GT(s.pid, 0);
  EXPECT_EQ(s.device, "/dev/nbd3");
  EXPECT_EQ(s.last_term_signal, SIGKILL);
  ASSERT_EQ(ArgvLog().size(), 2u);
  EXPECT_EQ(ArgvLog()[1],
            std::string(FAKE_RBD_NBD_PATH) +
                " attach -f --device /dev/nbd3 --try-netlink --reattach-timeout 30 --cookie vol1"
                " --id csi --keyfile /etc/ceph/csi.key --rbd_cache=false --err_to_stderr=true --admin-socket " +
                config_.state_dir +
                "/asok/$pid.asok"
                " --mon_host 10.0.0.1:6789,10.0.0.2:6789"
                " -c /etc/ceph/ceph.conf --exclusive rbd/img1");
  ASSERT_EQ(breaker_.breaks.size(), 1u);
  EXPECT_EQ(breaker_.breaks[0].image, "rbd/img1");
  EXPECT_EQ(breaker_.breaks[0].owner, FakeLockBreaker::ClientOf(old_pid)) << "the map's own client, dead";
  EXPECT_EQ(breaker_.breaks[0].attaches_before, 0) << "the attach must wait for the lock owner to be seen";
  const auto& t = sup().transitions();
  EXPECT_EQ(t.Count(MappingState::kConnected, MappingState::kDead), 1u);
  EXPECT_EQ(t.Count(MappingState::kDead, MappingState::kReattaching), 1u);
  EXPECT_EQ(t.Count(MappingState::kReattaching, MappingState::kConnected), 1u);
  EXPECT_EQ(sup().counters().deaths, 1u);
  EXPECT_EQ(sup().counters().reattach_successes, 1u);
  ASSERT_EQ(sup().reattach_seconds().count, 1u) << "the outage is in the re-attach histogram";
  EXPECT_GT(sup().reattach_seconds().sum, 0);
  EXPECT_LT(sup().reattach_seconds().sum, 30) << "within the kernel's window";

  // The re-attached server dies too: another outage, another attach.
  ASSERT_EQ(kill(s.pid, SIGKILL), 0);
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", 2); }));
  ASSERT_EQ(breaker_.breaks.size(), 2u);
  EXPECT_EQ(breaker_.breaks[1].owner, FakeLockBreaker::ClientOf(s.pid)) << "the first attach's client, known as ours";
  EXPECT_EQ(breaker_.breaks[1].attaches_before, 1);
  ASSERT_TRUE(RunUntil([&] { return Snap("vol1").own_clients.size() == 3; }));
  std::vector<CephClient> own = Snap("vol1").own_clients;
  for (int pid : {old_pid, s.pid, Snap("vol1").pid}) {
    EXPECT_NE(std::find(own.begin(), own.end(), FakeLockBreaker::ClientOf(pid)), own.end()) << pid;
  }
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, LockBreakerErrorIsCountedButTheAttachStillRuns) {
  breaker_.result = Status::Unavailable("cluster unreachable");
  Behave("img1.map", "device=/dev/nbd1");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  kill(Snap("vol1").pid, SIGKILL);
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", 1); }));
  EXPECT_EQ(sup().counters().lock_break_failures, 1u);
  EXPECT_EQ(CountArgv(" attach "), 1);
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, FailedAttachesBackOffExponentiallyThenSucceed) {
  Behave("img1.map", "device=/dev/nbd1");
  Behave("img1.attach", "fail_first=4");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  kill(Snap("vol1").pid, SIGKILL);
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", 1); }));
  EXPECT_EQ(CountArgv(" attach "), 5);
  ASSERT_EQ(breaker_.breaks.size(), 1u) << "the map's dead lock, once; the failed attaches never held one";
  EXPECT_EQ(sup().counters().reattach_failures, 4u);
  EXPECT_EQ(sup().counters().reattach_attempts, 5u);
  EXPECT_EQ(sup().transitions().Count(MappingState::kReattaching, MappingState::kDead), 4u);
  // Delays: 20, 40, 80, 80 (cap). Timers never fire early: lower bounds
  // on the loop clock at each attempt.
  const uint64_t min_gap[] = {20, 40, 80, 80};
  std::vector<uint64_t> starts = breaker_.AttemptStarts();
  ASSERT_GE(starts.size(), 5u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_GE(starts[i + 1] - starts[i], min_gap[i]) << "gap " << i;
  }
  EXPECT_EQ(Snap("vol1").attach_attempts, 0u);
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, PastTheReattachDeadlineTheMappingExpiresAndIsNotRetried) {
  // Attempts stop 1000 ms after the death: room for at least two failed
  // attaches (spawn, exit, backoff) on a loaded machine.
  config_.reattach_timeout_s = 2;
  config_.reattach_safety_margin_ms = 1000;
  config_.backoff_initial_ms = 50;
  config_.backoff_cap_ms = 100;
  Behave("img1.map", "device=/dev/nbd1");
  Behave("img1.attach", "mode=exit exit_code=1 stderr=rbd-nbd:_cookie_mismatch");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  uint64_t death = loop_.NowMs();
  kill(Snap("vol1").pid, SIGKILL);
  ASSERT_TRUE(RunUntil([&] {
    auto s = sup().Snapshot("vol1");
    return s && s->state == MappingState::kExpired;
  }));
  EXPECT_GE(loop_.NowMs() - death, 250u);
  int attempts = CountArgv(" attach ");
  EXPECT_GE(attempts, 2);
  auto s = Snap("vol1");
  EXPECT_NE(s.reason.find("attach pid"), std::string::npos) << s.reason;
  EXPECT_EQ(s.reason.find("cookie mismatch"), std::string::npos) << "raw output stays out of the reason";
  EXPECT_NE(s.last_exit_output.find("cookie mismatch"), std::string::npos) << s.last_exit_output;
  RunFor(400);
  EXPECT_EQ(CountArgv(" attach "), attempts) << "no attempt after Expired";
  EXPECT_EQ(sup().counters().expirations, 1u);
  EXPECT_EQ(Snap("vol1").state, MappingState::kExpired);
  // Map of an expired volume is refused; unmap cleans it up.
  EXPECT_EQ(MapAndWait(Request("vol1", "img1")).status().code(), Code::kFailedPrecondition);
  EXPECT_TRUE(UnmapAndWait("vol1").ok());
  EXPECT_EQ(sup().transitions().Count(MappingState::kExpired, MappingState::kUnmapping), 1u);
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, AnAttachKilledOnExpiryKeepsTheLastFailuresOutput) {
  // A window of 3 s: room for the failed first attempt on a loaded machine
  // (with 1 s it was sometimes the only one).
  config_.reattach_timeout_s = 4;
  config_.reattach_safety_margin_ms = 1000;
  config_.backoff_initial_ms = 50;
  Behave("img1.map", "device=/dev/nbd1");
  Behave("img1.attach", "mode=hang fail_first=1");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  kill(Snap("vol1").pid, SIGKILL);
  ASSERT_TRUE(RunUntil([&] { return Snap("vol1").state == MappingState::kExpired; }));
  ASSERT_TRUE(RunUntil([&] { return CountArgv(" attach ") == 2 && Snap("vol1").pid == 0; }));
  RunFor(100);  // the hung attach's exit, reaped after the expiry killed it
  auto s = Snap("vol1");
  EXPECT_NE(s.reason.find("reattach deadline passed after 2 attempt(s)"), std::string::npos) << s.reason;
  EXPECT_NE(s.last_exit_output.find("fake attach failure 1"), std::string::npos) << s.last_exit_output;
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, AnExpiredDeviceIsDisconnectedOnceTheKernelsWindowHasPassed) {
  config_.reattach_timeout_s = 2;
  config_.reattach_safety_margin_ms = 1000;
  Behave("img1.map", "device=/dev/nbd1");
  Behave("img1.attach", "mode=exit exit_code=1");
  MakeSysfs(1);
  std::ofstream(dir_ + "/sys/block/nbd1/backend") << "vol1\n";
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  uint64_t death = loop_.NowMs();
  kill(Snap("vol1").pid, SIGKILL);
  ASSERT_TRUE(RunUntil([&] { return Snap("vol1").state == MappingState::kExpired; }));
  EXPECT_EQ(CountArgv(" unmap "), 0) << "not before the kernel's window has passed: an attach could still save it";
  ASSERT_TRUE(RunUntil([&] { return CountArgv(" unmap /dev/nbd1") == 1; }, 8000));
  EXPECT_GE(loop_.NowMs() - death, 2000u + 2000u) << "the window (2 s) and the slack";
  ASSERT_TRUE(RunUntil([&] { return Snap("vol1").reason.find("disconnected") != std::string::npos; }));
  EXPECT_EQ(Snap("vol1").state, MappingState::kExpired) << "its mount and record stay for the unstage";
  EXPECT_TRUE(UnmapAndWait("vol1").ok());
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, AnExpiredDeviceThatServesAnotherCookieIsNeverTouched) {
  // After a daemon restart the index may serve another volume now.
  MakeSysfs(1);
  std::ofstream(dir_ + "/sys/block/nbd1/backend") << "someone-else\n";
  AdoptRequest expired;
  expired.map = Request("vol1", "img1");
  expired.device = "/dev/nbd1";
  ASSERT_TRUE(sup().AdoptExpired(expired, "the kernel gave up").ok());
  RunFor(300);  // the release: the cookie read on a pool thread
  sup().OnLinkDead(1);
  EXPECT_EQ(sup().counters().link_dead_events, 1u) << "the event is not the expired mapping's";
  EXPECT_TRUE(UnmapAndWait("vol1").ok());
  EXPECT_EQ(CountArgv(" unmap "), 0) << "neither the release nor the unstage unmaps another volume's device";
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, UnmapDuringABackoffStopsTheReattach) {
  Behave("img1.map", "device=/dev/nbd1");
  Behave("img1.attach", "mode=exit exit_code=1");
  config_.backoff_initial_ms = 2000;
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  kill(Snap("vol1").pid, SIGKILL);
  ASSERT_TRUE(RunUntil([&] { return sup().counters().reattach_failures == 1; }));
  EXPECT_EQ(Snap("vol1").state, MappingState::kDead);
  EXPECT_TRUE(UnmapAndWait("vol1").ok());
  RunFor(300);
  EXPECT_EQ(CountArgv(" attach "), 1);
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, LinkDeadWithAHungServerKillsItAndReattaches) {
  Behave("img1.map", "device=/dev/nbd6");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  int pid = Snap("vol1").pid;
  RunFor(150);         // past the grace that treats LINK_DEAD as stale
  kill(pid, SIGSTOP);  // alive, but no longer serving
  sup().OnLinkDead(6);
  sup().OnLinkDead(9);  // unknown device: ignored
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", 1); }));
  EXPECT_EQ(sup().counters().link_dead_kills, 1u);
  EXPECT_EQ(sup().counters().link_dead_events, 2u);
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, LinkDeadRightAfterConnectingIsIgnoredAsStale) {
  config_.link_dead_grace_ms = 5000;
  Behave("img1.map", "device=/dev/nbd6");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  int pid = Snap("vol1").pid;
  sup().OnLinkDead(6);
  RunFor(100);
  EXPECT_EQ(Snap("vol1").pid, pid);
  EXPECT_EQ(sup().counters().link_dead_kills, 0u);
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, TwentyMappingsDieAndReattachIndependently) {
  constexpr int kCount = 20;
  int done = 0;
  for (int i = 0; i < kCount; ++i) {
    Behave("img" + std::to_string(i) + ".map", "device=/dev/nbd" + std::to_string(i));
    sup().Map(Request("vol" + std::to_string(i), "img" + std::to_string(i)), [&](Result<std::string> r) {
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      ++done;
    });
  }
  ASSERT_TRUE(RunUntil([&] { return done == kCount; }, 30000));
  std::vector<int> pids(kCount);
  for (int i = 0; i < kCount; ++i) pids[i] = Snap("vol" + std::to_string(i)).pid;
  for (int i = 0; i < kCount; i += 2) kill(pids[i], SIGKILL);
  ASSERT_TRUE(RunUntil(
      [&] {
        for (int i = 0; i < kCount; i += 2) {
          if (!IsConnectedWithRestarts("vol" + std::to_string(i), 1)) return false;
        }
        return true;
      },
      30000));
  for (int i = 0; i < kCount; ++i) {
    auto s = Snap("vol" + std::to_string(i));
    EXPECT_EQ(s.device, "/dev/nbd" + std::to_string(i));
    EXPECT_EQ(s.restarts, i % 2 == 0 ? 1u : 0u) << i;
    if (i % 2 == 1) {
      EXPECT_EQ(s.pid, pids[i]) << i;
    }
    EXPECT_EQ(CountArgv("--device /dev/nbd" + std::to_string(i) + " "), i % 2 == 0 ? 1 : 0) << i;
  }
  EXPECT_EQ(sup().counters().deaths, static_cast<uint64_t>(kCount / 2));
  UnmapAllAndShutdown();
}

// A server a previous daemon instance left: fake_rbd_nbd serving rbd/imga
// on /dev/nbd5, started outside libuv.
class LeftoverServerTest : public SupervisorTest {
 protected:
  // Its pid once it serves the device; -1 when it does not start.
  int StartLeftoverServer() {
    Behave("imga.map", "device=/dev/nbd5");
    std::string env = "FAKE_RBD_NBD_DIR=" + dir_ + "/fake";
    std::vector<std::string> args = {FAKE_RBD_NBD_PATH, "map", "-f", "--cookie", "vol-a", "rbd/imga"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    char* envp[] = {env.data(), nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    int pid = 0;
    int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return -1;
    return RunUntil([&] { return std::filesystem::exists(dir_ + "/fake/nbd5.pid"); }) ? pid : -1;
  }
};

// The previous daemon was killed right after it re-attached: the journal
// has the new server's pid, not yet its client. The clients that appeared
// since that server started are its own, so its death is healed, not fenced.
TEST_F(LeftoverServerTest, AnAdoptedServerWhoseClientsWereNotJournaledIsKnownByTheClientsSinceItsStart) {
  const CephClient older{"client.77", "127.0.0.1:0/77"};
  std::filesystem::create_directories(dir_ + "/fake");
  std::ofstream(dir_ + "/fake/imga.watchers") << older.ToString() << "\n";
  int pid = StartLeftoverServer();
  ASSERT_GT(pid, 0);

  AdoptRequest a;
  a.map = Request("vol-a", "imga");
  a.map.own_clients = {older};
  a.map.clients_before_server = std::vector<CephClient>{older};
  a.device = "/dev/nbd5";
  a.pid = pid;
  ASSERT_TRUE(sup().Adopt(a).ok());
  CephClient adopted = FakeLockBreaker::ClientOf(pid);
  ASSERT_TRUE(RunUntil([&] { return Snap("vol-a").own_clients.size() == 2; }));
  EXPECT_FALSE(Snap("vol-a").clients_before_server.has_value()) << "known now: the journal drops them";

  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol-a", 1); }));
  EXPECT_EQ(sup().counters().fencings, 0u);
  ASSERT_FALSE(breaker_.breaks.empty());
  EXPECT_EQ(breaker_.breaks.back().owner, adopted);
  UnmapAllAndShutdown();
}

TEST_F(LeftoverServerTest, AdoptedServerIsWatchedThroughAPidfdAndReattachedWhenItDies) {
  int pid = StartLeftoverServer();
  ASSERT_GT(pid, 0);

  AdoptRequest a;
  a.map = Request("vol-a", "imga");
  a.device = "/dev/nbd5";
  a.pid = pid;
  ASSERT_TRUE(sup().Adopt(a).ok());
  auto s = Snap("vol-a");
  EXPECT_EQ(s.state, MappingState::kConnected);
  EXPECT_TRUE(s.adopted);
  EXPECT_EQ(s.pid, pid);
  EXPECT_EQ(sup().Adopt(a).code(), Code::kAlreadyExists);

  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);  // we are its parent here; the daemon would not be
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol-a", 1); }));
  s = Snap("vol-a");
  EXPECT_FALSE(s.adopted);
  EXPECT_FALSE(s.last_exit_status.has_value()) << "an adopted process's status is unknowable";
  EXPECT_EQ(CountArgv("attach -f --device /dev/nbd5 "), 1);
  // Adopted with no journaled client (an older record): while it ran, the
  // image's one client was it, so its lock is broken as this volume's own.
  ASSERT_EQ(breaker_.breaks.size(), 1u);
  EXPECT_EQ(breaker_.breaks[0].owner, FakeLockBreaker::ClientOf(pid));
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, AdoptingAVanishedPidReattachesAtOnce) {
  int pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);  // gone for good
  AdoptRequest a;
  a.map = Request("vol-b", "imgb");
  a.device = "/dev/nbd8";
  a.pid = pid;
  ASSERT_TRUE(sup().Adopt(a).ok());
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol-b", 1); }));
  a.map.volume_id = "vol-c";
  EXPECT_EQ(sup().Adopt(a).code(), Code::kAlreadyExists);  // device taken
  a.device = "/dev/sda";
  EXPECT_EQ(sup().Adopt(a).code(), Code::kInvalidArgument);
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, ReattachAfterRestartAttachesTheJournaledDeviceWithoutWatchingAPid) {
  AdoptRequest a;
  a.map = Request("vol-r", "imgr");
  a.device = "/dev/nbd6";
  a.pid = 1;  // ignored: a dead server's pid may belong to anyone now
  ASSERT_TRUE(sup().Reattach(a, "healing: no rbd-nbd serves /dev/nbd6").ok());
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol-r", 1); }));
  EXPECT_FALSE(Snap("vol-r").adopted);
  EXPECT_EQ(CountArgv("attach -f --device /dev/nbd6 "), 1);
  EXPECT_EQ(sup().Reattach(a, "again").code(), Code::kAlreadyExists);
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, AdoptExpiredReportsExpiredAndStillUnmaps) {
  AdoptRequest a;
  a.map = Request("vol-x", "imgx");
  a.device = "/dev/nbd7";
  MakeSysfs(7);
  std::ofstream(dir_ + "/sys/block/nbd7/backend") << "vol-x\n";  // the kernel still holds it for us
  ASSERT_TRUE(sup().AdoptExpired(a, "/dev/nbd7 fails IO at once").ok());
  auto s = Snap("vol-x");
  EXPECT_EQ(s.state, MappingState::kExpired);
  EXPECT_EQ(s.reason, "/dev/nbd7 fails IO at once");
  EXPECT_EQ(s.pid, 0);
  EXPECT_EQ(sup().counters().expirations, 1u);
  EXPECT_TRUE(UnmapAndWait("vol-x").ok());
  EXPECT_EQ(CountArgv("unmap /dev/nbd7"), 1);
  a.device = "nbd7";
  EXPECT_EQ(sup().AdoptExpired(a, "bad device").code(), Code::kInvalidArgument);
  UnmapAllAndShutdown();
}

}  // namespace
}  // namespace nbdk
