// Supervisor: a snapshot's mapping (supervisor/image_fence.h ImageRole::
// kSnapshot) - re-attached after a restart to the snapshot, read-only,
// never fenced and never the reason for a lock break.
#include <signal.h>

#include "test/supervisor/supervisor_fixture.h"

namespace nbdk {
namespace {

const CephClient kWriter{"client.9001", "127.0.0.1:0/424242"};

MapRequest SnapshotOf(MapRequest r, const std::string& snap) {
  r.image.snap = snap;
  r.read_only = true;
  return r;
}

// The journal's request after a daemon restart, the server gone: the
// attach serves the snapshot. Its journaled clients include the image's
// lock owner (a writer's client that appeared while it started): a
// writer's volume would break that lock, a snapshot's never does.
TEST_F(SupervisorTest, AReattachAfterARestartServesTheSnapshotAndBreaksNoLock) {
  breaker_.stranger = kWriter;
  AdoptRequest a;
  a.map = SnapshotOf(Request("vol1", "img1"), "monday");
  a.map.own_clients = {kWriter};
  a.device = "/dev/nbd4";
  ASSERT_TRUE(sup().Reattach(a, "journal: server gone").ok());
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", 1); }));
  ASSERT_EQ(CountArgv(" attach "), 1);
  std::string attach = ArgvLog().back();
  EXPECT_TRUE(attach.ends_with(" --read-only rbd/img1@monday")) << attach;
  EXPECT_NE(attach.find("--device /dev/nbd4 "), std::string::npos) << attach;
  EXPECT_TRUE(breaker_.breaks.empty()) << "the lock breaker never runs for a snapshot";
  EXPECT_EQ(sup().counters().fencings, 0u);

  // The same journal entry for the image itself would break it: the
  // difference is the snapshot alone.
  AdoptRequest head = a;
  head.map = Request("vol2", "img1");
  head.map.own_clients = {kWriter};
  head.device = "/dev/nbd5";
  ASSERT_TRUE(sup().Reattach(head, "journal: server gone").ok());
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol2", 1); }));
  ASSERT_EQ(breaker_.breaks.size(), 1u);
  EXPECT_EQ(breaker_.breaks[0].owner, kWriter);
  UnmapAllAndShutdown();
}

// The volume's server dies again and again: every attach is of the snapshot.
TEST_F(SupervisorTest, EveryReattachOfASnapshotIsOfTheSnapshot) {
  Behave("img1@monday.map", "device=/dev/nbd2");
  ASSERT_TRUE(MapAndWait(SnapshotOf(Request("vol1", "img1"), "monday")).ok());
  for (uint32_t restarts = 1; restarts <= 3; ++restarts) {
    ASSERT_EQ(kill(Snap("vol1").pid, SIGKILL), 0);
    ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", restarts); }));
  }
  std::vector<std::string> lines = ArgvLog();
  ASSERT_EQ(lines.size(), 4u);
  for (const std::string& line : lines) EXPECT_TRUE(line.ends_with(" --read-only rbd/img1@monday")) << line;
  EXPECT_TRUE(breaker_.breaks.empty());
  EXPECT_EQ(Snap("vol1").snap, "monday");
  UnmapAllAndShutdown();
}

// One volume ID is one thing mapped: the image and its snapshot differ.
TEST_F(SupervisorTest, AVolumeMappedToASnapshotIsNotMappedAgainToTheHead) {
  Behave("img1@monday.map", "device=/dev/nbd2");
  ASSERT_TRUE(MapAndWait(SnapshotOf(Request("vol1", "img1"), "monday")).ok());
  MapRequest head = Request("vol1", "img1");
  head.read_only = true;
  Result<std::string> r = MapAndWait(head);
  EXPECT_EQ(r.status().code(), Code::kAlreadyExists);
  EXPECT_NE(r.status().message().find("rbd/img1@monday, not rbd/img1"), std::string::npos) << r.status().message();
  EXPECT_TRUE(MapAndWait(SnapshotOf(Request("vol1", "img1"), "monday")).ok()) << "the same again";
  UnmapAllAndShutdown();
}

}  // namespace
}  // namespace nbdk
