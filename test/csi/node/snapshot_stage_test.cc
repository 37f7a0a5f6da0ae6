// A snapshot's volume through the Node operations (node_fixture.h: a real
// Supervisor driving fake_rbd_nbd, a real journal): rbd-nbd maps and
// re-attaches `rbd/img@monday` read-only and never the image's head, the
// journal keeps the snapshot, no lock is broken for it, the image is staged
// beside it, and it never grows.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <string>
#include <vector>

#include "test/csi/node/node_fixture.h"

namespace nbdk::testing {
namespace {

class SnapshotStageTest : public NodeTest {
 protected:
  void SetUp() override {
    NodeTest::SetUp();
    Behave("img@monday.map", "device=/dev/nbd3");
  }

  // kVolume as the snapshot "monday" of rbd/img, a read-only block device.
  StageRequest SnapshotRequest() const {
    StageRequest r = Request(true);
    r.capability.read_only = true;
    r.snapshot = "monday";
    return r;
  }

  VolumeOpLock LockOf(const std::string& volume_id) { return std::move(volumes_->Lock(volume_id)).value(); }

  // Every rbd-nbd map and attach so far ends with `spec` and is read-only.
  void ExpectEveryStartServes(const std::string& spec) {
    int starts = 0;
    for (const std::string& line : ArgvLog()) {
      if (line.find(" map ") == std::string::npos && line.find(" attach ") == std::string::npos) continue;
      ++starts;
      EXPECT_TRUE(line.ends_with(" " + spec)) << line;
      EXPECT_NE(line.find(" --read-only "), std::string::npos) << line;
    }
    EXPECT_GT(starts, 0);
  }
};

TEST_F(SnapshotStageTest, MapsAndReattachesTheSnapshotNeverTheHeadAndBreaksNoLock) {
  ASSERT_TRUE(Stage(SnapshotRequest()).ok());
  ASSERT_NE(Record(), nullptr);
  EXPECT_EQ(Record()->snap, "monday");
  EXPECT_EQ(RecordedImage(*Record()).Spec(), "rbd/img@monday");
  EXPECT_TRUE(Record()->read_only);
  ExpectEveryStartServes("rbd/img@monday");

  for (uint32_t restarts = 1; restarts <= 2; ++restarts) {
    int pid = Snap(kVolume).pid;
    ASSERT_GT(pid, 0);
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts(kVolume, restarts); }));
  }
  EXPECT_EQ(CountArgv(" attach "), 2);
  ExpectEveryStartServes("rbd/img@monday");
  EXPECT_TRUE(breaker_.breaks.empty()) << "the lock breaker never runs for a snapshot";
  EXPECT_EQ(sup().counters().fencings, 0u);
  ExpectUnstaged();
  ExpectNothingLeft();
}

// Another node writes the image's head: its watch and lock do not keep a
// snapshot from mapping or re-attaching, and its lock is not touched.
TEST_F(SnapshotStageTest, AWriterOfTheHeadElsewhereNeitherRefusesNorFencesTheSnapshot) {
  breaker_.stranger = CephClient{"client.9001", "10.0.0.9:0/77"};
  ASSERT_TRUE(Stage(SnapshotRequest()).ok());
  ASSERT_EQ(kill(Snap(kVolume).pid, SIGKILL), 0);
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts(kVolume, 1); }));
  EXPECT_TRUE(breaker_.breaks.empty());
  EXPECT_EQ(sup().counters().fencings, 0u);
  ExpectUnstaged();
  ExpectNothingLeft();
}

// The image's writer on this node and its snapshot side by side: each is
// staged once, the writer's checks do not take the snapshot's watch for
// another writer, and its own dead lock is still the only one broken.
TEST_F(SnapshotStageTest, TheImageIsStagedBesideItsSnapshotAndItsWriterHealsBesideIt) {
  Behave("img@monday.map", "device=/dev/nbd4");
  MakeSysfs(4);
  StageRequest snapshot = SnapshotRequest();
  snapshot.volume_id = "img.snap.monday";
  std::filesystem::create_directories(dir_ + "/staging-snap");
  snapshot.staging_target_path = dir_ + "/staging-snap";
  Status s = Run([&](auto done) { StageVolume(*node_, snapshot, LockOf(snapshot.volume_id), done); });
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(RunUntil([&] { return !Snap("img.snap.monday").own_clients.empty(); }));

  ASSERT_TRUE(Stage(Request()).ok()) << "the writer of rbd/img beside its snapshot";
  int writer = Snap(kVolume).pid;
  ASSERT_EQ(kill(writer, SIGKILL), 0);
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts(kVolume, 1); }));
  EXPECT_EQ(sup().counters().fencings, 0u);
  ASSERT_EQ(breaker_.breaks.size(), 1u);
  EXPECT_EQ(breaker_.breaks[0].owner, FakeLockBreaker::ClientOf(writer));

  // A second volume of the same snapshot is refused, as of the same image.
  StageRequest again = snapshot;
  again.volume_id = "img.snap.monday-2";
  s = Run([&](auto done) { StageVolume(*node_, again, LockOf(again.volume_id), done); });
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("rbd/img@monday is already staged on this node as volume img.snap.monday"),
            std::string::npos)
      << s.ToString();

  ExpectUnstaged();
  UnstageRequest u{"img.snap.monday", snapshot.staging_target_path};
  EXPECT_TRUE(Run([&](auto done) { UnstageVolume(*node_, u, LockOf(u.volume_id), done); }).ok());
}

TEST_F(SnapshotStageTest, AStagedVolumeIsNotStagedAgainAsAnotherSnapshotOrTheHead) {
  ASSERT_TRUE(Stage(SnapshotRequest()).ok());
  EXPECT_TRUE(Stage(SnapshotRequest()).ok()) << "the same again: idempotent";
  StageRequest tuesday = SnapshotRequest();
  tuesday.snapshot = "tuesday";
  Status s = Stage(tuesday);
  EXPECT_EQ(s.code(), Code::kAlreadyExists) << s.ToString();
  EXPECT_NE(s.message().find("rbd/img@monday"), std::string::npos) << s.ToString();
  StageRequest head = Request(true);
  head.capability.read_only = true;
  EXPECT_EQ(Stage(head).code(), Code::kAlreadyExists);
  EXPECT_EQ(CountArgv(" map "), 1);
  ExpectUnstaged();
  ExpectNothingLeft();
}

TEST_F(SnapshotStageTest, ASnapshotNeverGrows) {
  ASSERT_TRUE(Stage(SnapshotRequest()).ok());
  ExpandRequest e;
  e.volume_id = kVolume;
  e.volume_path = MountPoint();
  e.required_bytes = int64_t{1} << 30;
  csi::v1::NodeExpandVolumeResponse response;
  Status s = Run([&](auto done) { ExpandVolume(*node_, e, Lock(), &response, done); });
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("snapshot rbd/img@monday"), std::string::npos) << s.ToString();
  ExpectUnstaged();
  ExpectNothingLeft();
}

}  // namespace
}  // namespace nbdk::testing
