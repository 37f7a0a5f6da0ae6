// Supervisor: one writer per image across nodes (supervisor/image_fence.h)
// - a stranger keeps a single-node volume from mapping and re-attaching,
// never a multi-node one, and no stranger's lock is ever broken.
#include <signal.h>

#include <algorithm>

#include "test/supervisor/supervisor_fixture.h"

namespace nbdk {
namespace {

const CephClient kStranger{"client.9001", "127.0.0.1:0/424242"};

TEST_F(SupervisorTest, AStrangersWatchRefusesTheMapNamingItAndSpawnsNothing) {
  breaker_.stranger = kStranger;
  Result<std::string> r = MapAndWait(Request("vol1", "img1"));
  EXPECT_EQ(r.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(
      r.status().message().find("rbd/img1 is in use by another client: watcher and lock owner " + kStranger.ToString()),
      std::string::npos)
      << r.status().message();
  EXPECT_EQ(CountArgv(" map "), 0);
  EXPECT_FALSE(sup().Snapshot("vol1").has_value()) << "a failed map is forgotten";
  UnmapAllAndShutdown();
}

// The check before a map cannot see another node that maps meanwhile: the
// listing after it does, and the device is disconnected before the map
// fails naming the other client.
TEST_F(SupervisorTest, AStrangerThatMapsBesideTheMapFailsItAndItsDeviceIsDisconnected) {
  Behave("img1.map", "device=/dev/nbd2");
  breaker_.stranger = kStranger;
  breaker_.stranger_from = 1;       // not there at the check, there after the map
  breaker_.stranger_locks = false;  // the lock is ours (--exclusive): it only watches
  Result<std::string> r = MapAndWait(Request("vol1", "img1"));
  EXPECT_EQ(r.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(r.status().message().find(kStranger.ToString() + ", which appeared during the map"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(CountArgv("unmap /dev/nbd2"), 1) << "the device is disconnected before the answer";
  EXPECT_FALSE(sup().Snapshot("vol1").has_value()) << "a failed map is forgotten";
  UnmapAllAndShutdown();
}

// A single-node writer takes the image's lock for its process alone: its
// map and attach run with --exclusive; a shared or read-only one never.
TEST_F(SupervisorTest, OnlyASingleNodeWritersMapAndAttachTakeTheLock) {
  Behave("img1.map", "device=/dev/nbd2");
  Behave("img2.map", "device=/dev/nbd3");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  kill(Snap("vol1").pid, SIGKILL);
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", 1); }));
  EXPECT_EQ(CountArgv(" --exclusive "), 2) << "its map and its attach";
  MapRequest shared = Request("vol2", "img2");
  shared.multi_node = true;
  ASSERT_TRUE(MapAndWait(shared).ok());
  EXPECT_EQ(CountArgv(" --exclusive "), 2);
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, AStrangerAfterADeathFencesTheVolumeForGood) {
  Behave("img1.map", "device=/dev/nbd2");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  ASSERT_TRUE(RunUntil([&] { return Snap("vol1").own_clients.size() == 1; }));
  // Another node stages the image after this one's rbd-nbd died.
  breaker_.stranger = kStranger;
  kill(Snap("vol1").pid, SIGKILL);
  ASSERT_TRUE(RunUntil([&] { return Snap("vol1").state == MappingState::kFenced; }));
  auto s = Snap("vol1");
  EXPECT_NE(s.reason.find(kStranger.ToString()), std::string::npos) << s.reason;
  EXPECT_EQ(CountArgv(" attach "), 0) << "never re-attached";
  EXPECT_TRUE(breaker_.breaks.empty()) << "a stranger's lock is never broken";
  EXPECT_EQ(sup().counters().fencings, 1u);
  ASSERT_TRUE(RunUntil([&] { return CountArgv("unmap /dev/nbd2") == 1; })) << "the device is disconnected at once";
  // The stranger leaving changes nothing: this node's view of the
  // filesystem is stale now.
  breaker_.stranger.reset();
  RunFor(300);
  EXPECT_EQ(Snap("vol1").state, MappingState::kFenced);
  EXPECT_EQ(CountArgv(" attach "), 0);
  EXPECT_EQ(MapAndWait(Request("vol1", "img1")).status().code(), Code::kFailedPrecondition);
  // An unmap cleans it up; the device was released already.
  EXPECT_TRUE(UnmapAndWait("vol1").ok());
  EXPECT_EQ(CountArgv("unmap /dev/nbd2"), 1) << "the release disconnected it; the unstage does not again";
  EXPECT_EQ(sup().transitions().Count(MappingState::kFenced, MappingState::kUnmapping), 1u);
  UnmapAllAndShutdown();
}

// A Controller's resize, a snapshot or a backup tool takes the lock for a
// moment after the death: the re-attach waits and looks again, and a
// volume nobody took over is never fenced.
TEST_F(SupervisorTest, ABriefLockHolderAfterADeathIsWaitedForNotFenced) {
  Behave("img1.map", "device=/dev/nbd2");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  ASSERT_TRUE(RunUntil([&] { return Snap("vol1").own_clients.size() == 1; }));
  size_t listed = breaker_.lists.size();
  breaker_.stranger = kStranger;
  breaker_.stranger_from = listed;       // the first check after the death sees it
  breaker_.stranger_until = listed + 2;  // and the next one, then it is gone
  kill(Snap("vol1").pid, SIGKILL);
  ASSERT_TRUE(RunUntil([&] { return Snap("vol1").state == MappingState::kConnected && CountArgv(" attach ") == 1; }));
  EXPECT_EQ(sup().counters().fencings, 0u);
  EXPECT_EQ(sup().transitions().Count(MappingState::kReattaching, MappingState::kFenced), 0u);
  EXPECT_GE(breaker_.lists.size(), listed + 3) << "looked again after the holder left";
  EXPECT_TRUE(breaker_.breaks.empty() || breaker_.breaks.front().owner != kStranger)
      << "a stranger's lock is never broken";
  UnmapAllAndShutdown();
}

// A stranger that only watches (a snapshot, another node's stage in
// flight) has not written: the re-attach waits for it to leave.
TEST_F(SupervisorTest, AStrangerThatOnlyWatchesIsWaitedForNotFenced) {
  Behave("img1.map", "device=/dev/nbd2");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  ASSERT_TRUE(RunUntil([&] { return Snap("vol1").own_clients.size() == 1; }));
  breaker_.stranger = kStranger;
  breaker_.stranger_locks = false;
  kill(Snap("vol1").pid, SIGKILL);
  ASSERT_TRUE(RunUntil([&] { return sup().counters().reattach_failures >= 2; }));
  EXPECT_EQ(CountArgv(" attach "), 0);
  EXPECT_NE(Snap("vol1").reason.find("waiting for it to leave"), std::string::npos) << Snap("vol1").reason;
  breaker_.stranger.reset();
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", 1); }));
  EXPECT_EQ(sup().counters().fencings, 0u);
  UnmapAllAndShutdown();
}

// One that appears during the attach, while the new server holds the lock
// (a Controller call, another node's stage that will fail): no writer, no
// fence (supervisor/one_writer.pml, mutant FENCE_ON_WATCHERS).
TEST_F(SupervisorTest, AWatcherBesideAReattachThatHoldsTheLockIsNoWriter) {
  Behave("img1.map", "device=/dev/nbd2");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  ASSERT_TRUE(RunUntil([&] { return Snap("vol1").own_clients.size() == 1; }));
  breaker_.stranger = kStranger;
  breaker_.stranger_from = breaker_.lists.size() + 1;  // not at the check, there after the attach
  breaker_.stranger_locks = false;
  kill(Snap("vol1").pid, SIGKILL);
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", 1); }));
  ASSERT_TRUE(RunUntil([&] { return Snap("vol1").own_clients.size() == 2; })) << "the new server is known";
  RunFor(200);
  EXPECT_EQ(Snap("vol1").state, MappingState::kConnected);
  EXPECT_EQ(sup().counters().fencings, 0u);
  const auto own = Snap("vol1").own_clients;
  EXPECT_EQ(std::count(own.begin(), own.end(), kStranger), 0) << "the stranger is not ours";
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, AMultiNodeVolumeSharesTheImageButNeverBreaksAStrangersLock) {
  Behave("img1.map", "device=/dev/nbd2");
  breaker_.stranger = kStranger;
  MapRequest r = Request("vol1", "img1");
  r.multi_node = true;
  ASSERT_TRUE(MapAndWait(r).ok());
  kill(Snap("vol1").pid, SIGKILL);
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", 1); }));
  EXPECT_TRUE(breaker_.breaks.empty());
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, UnlistableClientsMeanNoAttachUntilTheyAreKnown) {
  config_.backoff_initial_ms = 20;
  Behave("img1.map", "device=/dev/nbd2");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  breaker_.list_result = Status::Unavailable("monitors unreachable");
  kill(Snap("vol1").pid, SIGKILL);
  ASSERT_TRUE(RunUntil([&] { return sup().counters().reattach_failures >= 3; }));
  EXPECT_EQ(CountArgv(" attach "), 0) << "not proven safe: no attach";
  EXPECT_NE(Snap("vol1").reason.find("monitors unreachable"), std::string::npos) << Snap("vol1").reason;
  breaker_.list_result = Status::Ok();
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", 1); }));
  UnmapAllAndShutdown();
}

// A server that died before its clients were known (its daemon too): the
// clients since its start are its own, and its lock is broken, not feared.
TEST_F(SupervisorTest, AServerDeadBeforeItsClientsWereKnownLeavesThemAmongThoseSinceItsStart) {
  breaker_.stranger = kStranger;  // the dead server's lingering watch and lock
  AdoptRequest a;
  a.map = Request("vol1", "img1");
  a.map.own_clients = {{"client.77", "127.0.0.1:0/77"}};
  a.map.clients_before_server = std::vector<CephClient>{};
  a.device = "/dev/nbd4";
  ASSERT_TRUE(sup().Reattach(a, "journal: server gone").ok());
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", 1); }));
  ASSERT_EQ(breaker_.breaks.size(), 1u);
  EXPECT_EQ(breaker_.breaks[0].owner, kStranger);
  EXPECT_EQ(sup().counters().fencings, 0u);

  // Without the journal's word, the same client is a stranger.
  AdoptRequest b = a;
  b.map.volume_id = "vol2";
  b.map.clients_before_server.reset();
  b.device = "/dev/nbd5";
  ASSERT_TRUE(sup().Reattach(b, "journal: server gone").ok());
  ASSERT_TRUE(RunUntil([&] { return Snap("vol2").state == MappingState::kFenced; }));
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, JournaledClientsAreOursAfterARestart) {
  // The daemon restarted: the dead server's client lingers, and only the
  // journal says it is this volume's.
  breaker_.stranger = kStranger;
  AdoptRequest a;
  a.map = Request("vol1", "img1");
  a.map.own_clients = {kStranger};
  a.device = "/dev/nbd4";
  ASSERT_TRUE(sup().Reattach(a, "journal: server gone").ok());
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", 1); }));
  ASSERT_EQ(breaker_.breaks.size(), 1u);
  EXPECT_EQ(breaker_.breaks[0].owner, kStranger);

  AdoptRequest b = a;
  b.map.volume_id = "vol2";
  b.map.own_clients = {};
  b.device = "/dev/nbd5";
  ASSERT_TRUE(sup().Reattach(b, "journal: server gone").ok());
  ASSERT_TRUE(RunUntil([&] { return Snap("vol2").state == MappingState::kFenced; }));
  UnmapAllAndShutdown();
}

// break_dead_locks=false (the daemon's ListOnlyLockBreaker): the re-attach
// still lists the clients before it attaches, and breaks no lock.
TEST_F(SupervisorTest, WithoutLockBreakingAReattachStillListsAndBreaksNothing) {
  ListOnlyLockBreaker list_only(loop_, breaker_);
  sup_ = std::make_unique<Supervisor>(loop_, config_, list_only);
  // The supervisor goes before the breaker it holds, however the test ends.
  struct ResetFirst {
    std::unique_ptr<Supervisor>& sup;
    ~ResetFirst() { sup.reset(); }
  } reset_first{sup_};
  Behave("img1.map", "device=/dev/nbd2");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  ASSERT_TRUE(RunUntil([&] { return Snap("vol1").own_clients.size() == 1; }));
  size_t listed = breaker_.lists.size();
  kill(Snap("vol1").pid, SIGKILL);
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", 1); }));
  EXPECT_GT(breaker_.lists.size(), listed) << "the clients are listed before the attach";
  EXPECT_TRUE(breaker_.breaks.empty());
  UnmapAllAndShutdown();
}

}  // namespace
}  // namespace nbdk
