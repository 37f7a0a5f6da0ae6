// ChaosScenario's injections. Each one returns once the daemon has healed
// what it broke (or fails the run), and books the child deaths it caused
// on the daemon incarnation that had to see them.
#include <signal.h>

#include <cstdio>
#include <future>
#include <optional>
#include <thread>

#include "test/chaos/chaos_scenario.h"
#include "test/chaos/heal_watch.h"

namespace nbdk::chaos {
namespace {

constexpr auto kHealTimeout = std::chrono::seconds(120);

std::string Fixed(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

}  // namespace

Status ChaosScenario::KillChildren(size_t count) {
  std::vector<ChaosVolume*> victims = {&RandomVolume()};
  while (victims.size() < count && victims.size() < volumes_.size()) {
    ChaosVolume* v = &RandomVolume();
    if (std::find(victims.begin(), victims.end(), v) == victims.end()) victims.push_back(v);
  }
  std::vector<ServerSeen> before;
  for (ChaosVolume* v : victims) {
    auto seen = SeeServer(keeper_.health_port(), v->id);
    if (!seen.ok()) return seen.status();
    before.push_back(*seen);
  }
  auto killed = Clock::now();
  for (const ServerSeen& s : before) {
    if (::kill(s.pid, SIGKILL) != 0) return Status::FromErrno(errno, "kill -9 " + std::to_string(s.pid));
    ++keeper_.current().child_deaths_injected;
  }
  for (size_t i = 0; i < victims.size(); ++i) {
    auto heal = WaitReattached(keeper_.health_port(), victims[i]->id, before[i], killed, kHealTimeout);
    if (!heal.ok()) return heal.status();
    report_.child_heal_s.push_back(*heal);
    Say("  " + victims[i]->id + ": rbd-nbd " + std::to_string(before[i].pid) + " killed, re-attached on " +
        before[i].device + " in " + Fixed(*heal) + " s");
  }
  return Status::Ok();
}

// A frozen server only delays IO: with rbd-nbd's own timeout at 0 the
// kernel's queue timeout just re-arms (docs/design/kernel-timeouts.md).
// Should the link still be reported dead, the daemon kills the server and
// re-attaches, so the outcome is read from /status, not assumed.
Status ChaosScenario::StopChild() {
  ChaosVolume& v = RandomVolume();
  auto before = SeeServer(keeper_.health_port(), v.id);
  if (!before.ok()) return before.status();
  double frozen = RandomSeconds(1.0, 3.0);
  auto stopped = Clock::now();
  if (::kill(before->pid, SIGSTOP) != 0) return Status::FromErrno(errno, "kill -STOP");
  std::this_thread::sleep_for(std::chrono::duration<double>(frozen));
  ::kill(before->pid, SIGCONT);
  // io timeout + the daemon's LINK_DEAD grace (2 s) + slack: by then a
  // replacement, if any, has started.
  std::this_thread::sleep_until(stopped + std::chrono::milliseconds(8500));
  auto now = vmtest::GetVolumeStatus(keeper_.health_port(), v.id);
  if (now && now->state == "Connected" && now->pid == before->pid && now->restarts == before->restarts) {
    Say("  " + v.id + ": rbd-nbd " + std::to_string(before->pid) + " stopped for " + Fixed(frozen) +
        " s and continued; still serving");
    return Status::Ok();
  }
  ++keeper_.current().child_deaths_injected;
  ++report_.injections["kill -STOP -> replaced"];
  auto heal = WaitReattached(keeper_.health_port(), v.id, *before, stopped, kHealTimeout);
  if (!heal.ok()) return heal.status();
  Say("  " + v.id + ": rbd-nbd " + std::to_string(before->pid) + " stopped for " + Fixed(frozen) +
      " s: the kernel declared the link dead and the daemon replaced it; Connected " + Fixed(*heal) +
      " s after the stop");
  return Status::Ok();
}

// rbd-nbd outlives its daemon: the restarted one must adopt every running
// server (same pids) and IO never notices. With `kill_one_while_down`, one
// server also dies while no daemon watches: the new one must find it dead
// and re-attach it on its device at start-up.
Status ChaosScenario::RestartDaemon(int signum, bool kill_one_while_down) {
  std::vector<ServerSeen> before;
  for (const ChaosVolume& v : volumes_) {
    auto seen = SeeServer(keeper_.health_port(), v.id);
    if (!seen.ok()) return seen.status();
    before.push_back(*seen);
  }
  pid_t old_pid = keeper_.pid();
  NBDK_RETURN_IF_ERROR(keeper_.Stop(signum, signum == SIGKILL ? "SIGKILL" : "SIGTERM"));
  if (!keeper_.current().exit_ok) return Status::Internal("nbdkeeperd did not exit 0 on SIGTERM");
  std::optional<size_t> victim;
  if (kill_one_while_down) {
    victim = std::uniform_int_distribution<size_t>(0, volumes_.size() - 1)(rng_);
    if (::kill(before[*victim].pid, SIGKILL) != 0) return Status::FromErrno(errno, "kill -9");
  }
  double down = RandomSeconds(0.2, 2.0);
  std::this_thread::sleep_for(std::chrono::duration<double>(down));
  auto launched = Clock::now();
  NBDK_RETURN_IF_ERROR(keeper_.Start(volumes_.size() - (victim ? 1 : 0)));
  if (victim) ++keeper_.current().child_deaths_injected;
  NBDK_RETURN_IF_ERROR(WaitAllConnected(keeper_.health_port(), VolumeIds(), kHealTimeout));
  double heal = std::chrono::duration<double>(Clock::now() - launched).count();
  (victim ? report_.down_heal_s : report_.daemon_heal_s).push_back(heal);
  for (size_t i = 0; i < volumes_.size(); ++i) {
    auto after = SeeServer(keeper_.health_port(), volumes_[i].id);
    if (!after.ok()) return after.status();
    bool replaced = after->pid != before[i].pid;
    if (after->device != before[i].device || replaced != (victim == i)) {
      return Status::Internal(volumes_[i].id + ": served by rbd-nbd " + std::to_string(after->pid) + " on " +
                              after->device + " after the restart, was " + std::to_string(before[i].pid) + " on " +
                              before[i].device + (victim == i ? " (killed meanwhile)" : " (alive)"));
    }
  }
  Say("  nbdkeeperd " + std::to_string(old_pid) + " down for " + Fixed(down) + " s" +
      (victim ? " (rbd-nbd of " + volumes_[*victim].id + " killed meanwhile)" : "") + "; " +
      std::to_string(keeper_.pid()) + " ready with every volume Connected " + Fixed(heal) + " s after launch");
  return Status::Ok();
}

// The loop thread serves a stage (map, mkfs, mount) while a death of
// another volume's server needs a re-attach: neither may wait for or
// disturb the other.
Status ChaosScenario::KillDuringStage() {
  ChaosVolume& victim = RandomVolume();
  auto before = SeeServer(keeper_.health_port(), victim.id);
  if (!before.ok()) return before.status();
  auto stage = std::async(std::launch::async, [this] { return Stage(keeper_.node(), ceph_, spare_); });
  // In flight: the daemon lists the mapping it is making.
  auto give_up = Clock::now() + std::chrono::seconds(60);
  while (!vmtest::GetVolumeStatus(keeper_.health_port(), spare_.id) &&
         stage.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout && Clock::now() < give_up) {
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(RandomSeconds(0, 1.0)));
  bool in_flight = stage.wait_for(std::chrono::seconds(0)) == std::future_status::timeout;
  auto killed = Clock::now();
  if (::kill(before->pid, SIGKILL) != 0) return Status::FromErrno(errno, "kill -9");
  ++keeper_.current().child_deaths_injected;
  Status staged = stage.get();
  if (!staged.ok()) return staged;
  spare_.staged = true;
  auto heal = WaitReattached(keeper_.health_port(), victim.id, *before, killed, kHealTimeout);
  if (!heal.ok()) return heal.status();
  report_.child_heal_s.push_back(*heal);
  if (auto spare = SeeServer(keeper_.health_port(), spare_.id); spare.ok()) devices_.push_back(spare->device);
  Say("  " + victim.id + ": rbd-nbd " + std::to_string(before->pid) + " killed " +
      (in_flight ? "while " : "(the stage had already finished: not a concurrent kill) after ") + spare_.id +
      " was staging; stage OK, re-attached in " + Fixed(*heal) + " s");
  if (!in_flight) ++report_.injections["kill during NodeStage: stage already done"];
  NBDK_RETURN_IF_ERROR(Unstage(keeper_.node(), spare_));
  spare_.staged = false;
  return Status::Ok();
}

}  // namespace nbdk::chaos
