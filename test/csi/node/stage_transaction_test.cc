// The stage transaction (csi/node/stage_transaction.h) failing at every step in
// turn: what the earlier steps did is undone and the journal says so; and
// an undo step failing: what is left stays journaled, named, and a later
// unstage cleans it up.
#include "csi/node/stage_transaction.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "csi/node/stash.h"
#include "test/csi/node/node_fixture.h"

namespace nbdk::testing {
namespace {

// One fault point: how to make the stage fail there, and whether the
// fake rbd-nbd had mapped the device by then.
struct StageFault {
  std::string name;
  bool block = false;
  bool mapped = false;
  std::function<void(NodeTest&)> inject;
};

void PrintTo(const StageFault& f, std::ostream* os) { *os << f.name; }

class StageTransactionTest : public NodeTest {};

class StageFaultTest : public NodeTest, public ::testing::WithParamInterface<StageFault> {};

std::vector<StageFault> StageFaults() {
  auto host = [](const std::string& step) { return [step](NodeTest& t) { t.FailHostStep(step); }; };
  auto journal_write = [](int n) { return [n](NodeTest& t) { t.FailJournalWrite(n); }; };
  return {
      {"WriteKeyFile", false, false, host("WriteKeyFile")},
      {"ResolveImage", false, false, [](NodeTest& t) { t.RemoveClusterConfig(); }},
      {"JournalStaging", false, false, journal_write(1)},
      {"WriteStash", false, false, host("WriteStash")},
      {"Map", false, false, [](NodeTest& t) { t.FailMap(); }},
      {"CreateMountPoint", false, true, host("CreateMountPoint")},
      {"ProbeDevice", false, true, host("ProbeDevice")},
      {"MakeFilesystem", false, true, host("MakeFilesystem")},
      {"Mount", false, true, host("Mount")},
      {"JournalStaged", false, true, journal_write(2)},
      {"BlockCreateMountPoint", true, true, host("CreateMountPoint")},
      {"BlockBindMount", true, true, host("BindMount")},
      {"BlockJournalStaged", true, true, journal_write(2)},
  };
}

TEST_F(StageTransactionTest, StagesThroughEveryStepOnce) {
  ASSERT_TRUE(Stage(Request()).ok());
  // The host steps a filesystem stage takes, in order: each is a fault
  // point of StageFaultTest, with the journal writes, the resolve and the map.
  EXPECT_EQ(host_.calls, (std::vector<std::string>{"WriteKeyFile", "WriteStash", "CreateMountPoint", "ProbeDevice",
                                                   "MakeFilesystem", "Mount", "WriteStash"}));
  ASSERT_NE(Record(), nullptr);
  EXPECT_EQ(Record()->state, VolumeState::kStaged);
  EXPECT_EQ(Record()->nbd_device, kDevice);
  EXPECT_EQ(journal_fs_.writes, 2);
  EXPECT_TRUE(host_.mounted.count(MountPoint()));
  EXPECT_TRUE(Exists(KeyFile()));
  Result<ImageMetaStash> stash = ReadStash(Staging());
  ASSERT_TRUE(stash.ok()) << stash.status().ToString();
  EXPECT_EQ(stash->device, kDevice);

  ExpectUnstaged();
  ExpectNothingLeft();
}

TEST_P(StageFaultTest, UndoesEveryEarlierStep) {
  const StageFault& fault = GetParam();
  fault.inject(*this);
  Status s = Stage(Request(fault.block));
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message().find("cleanup stopped"), std::string::npos) << s.ToString();
  ExpectNothingLeft();
  EXPECT_EQ(CountArgv(" unmap /dev/nbd3"), fault.mapped ? 1 : 0);

  // Nothing of the failed attempt is in the way of the next one.
  ClearFaults();
  ASSERT_TRUE(Stage(Request(fault.block)).ok());
  ExpectUnstaged();
  ExpectNothingLeft();
}

INSTANTIATE_TEST_SUITE_P(EveryStep, StageFaultTest, ::testing::ValuesIn(StageFaults()),
                         [](const auto& info) { return info.param.name; });

// The mount fails, then so does the unmap: the device stays mapped, and the
// record says so (state staging, the device), as does the stash.
TEST_F(StageTransactionTest, FailedUnmapLeavesTheVolumeJournaledWithItsDevice) {
  FailHostStep("Mount");
  FailUnmap();
  Status s = Stage(Request());
  EXPECT_NE(s.message().find("injected: Mount"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("cleanup stopped at unmap"), std::string::npos) << s.ToString();
  ASSERT_NE(Record(), nullptr);
  EXPECT_EQ(Record()->state, VolumeState::kStaging);
  EXPECT_EQ(Record()->nbd_device, kDevice);
  EXPECT_FALSE(Record()->mount_point_created);  // removed before the unmap
  EXPECT_FALSE(Exists(MountPoint()));
  EXPECT_EQ(JournalFiles(), 1u);
  EXPECT_TRUE(Exists(KeyFile()));
  Result<ImageMetaStash> stash = ReadStash(Staging());
  ASSERT_TRUE(stash.ok()) << stash.status().ToString();
  EXPECT_EQ(stash->device, kDevice);
  ASSERT_EQ(sup().Snapshots().size(), 1u);

  ClearFaults();
  ExpectUnstaged();
  ExpectNothingLeft();
}

// One writer per image (supervisor/image_fence.h): the staged record names
// the volume's own Ceph client, so that a restarted daemon knows it.
TEST_F(StageTransactionTest, TheStagedRecordNamesTheVolumesOwnClient) {
  ASSERT_TRUE(Stage(Request()).ok());
  ASSERT_NE(Record(), nullptr);
  EXPECT_EQ(Record()->rbd_clients, std::vector<CephClient>{FakeLockBreaker::ClientOf(Snap(kVolume).pid)});
  EXPECT_FALSE(Record()->multi_node);
  ExpectUnstaged();
  ExpectNothingLeft();
}

TEST_F(StageTransactionTest, AnotherNodesClientOnTheImageRefusesTheStageAndLeavesNothing) {
  breaker_.stranger = CephClient{"client.9001", "10.0.0.9:0/77"};
  Status s = Stage(Request());
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("in use by another client: watcher and lock owner client.9001@10.0.0.9:0/77"),
            std::string::npos)
      << s.ToString();
  EXPECT_EQ(CountArgv(" map "), 0);
  ExpectNothingLeft();
}

TEST_F(StageTransactionTest, AnImageAnotherCallStagesIsRefusedAndLeavesNothing) {
  Result<VolumeOpLock> held = volumes_->LockImage(Request().pool + "/" + Request().image_name);
  ASSERT_TRUE(held.ok());
  Status s = Stage(Request());
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("is being staged or unstaged by another call"), std::string::npos) << s.ToString();
  EXPECT_EQ(CountArgv(" map "), 0);
  ExpectNothingLeft();
}

// The "staged" journal write fails, then the unmount: the record names the
// device and the mount point this stage made, and unstage removes both.
TEST_F(StageTransactionTest, FailedUnmountLeavesTheMountPointJournaled) {
  FailJournalWrite(2);
  FailHostStep("Unmount");
  Status s = Stage(Request());
  EXPECT_NE(s.message().find("cleanup stopped at unmount"), std::string::npos) << s.ToString();
  ASSERT_NE(Record(), nullptr);
  EXPECT_EQ(Record()->state, VolumeState::kStaging);
  EXPECT_EQ(Record()->nbd_device, kDevice);
  EXPECT_TRUE(Record()->mount_point_created);
  EXPECT_TRUE(host_.mounted.count(MountPoint()));

  ExpectUnstaged();
  ExpectNothingLeft();
}

// The key file would not go: the record that names it is kept (it used to
// be removed first, leaving a key nobody knew about).
TEST_F(StageTransactionTest, FailedKeyRemovalKeepsTheRecord) {
  FailMap();
  FailHostStep("RemoveKeyFile");
  Status s = Stage(Request());
  EXPECT_NE(s.message().find("cleanup stopped at forget volume"), std::string::npos) << s.ToString();
  ASSERT_NE(Record(), nullptr);
  EXPECT_EQ(Record()->state, VolumeState::kStaging);
  EXPECT_EQ(Record()->keyfile_path, KeyFile());
  EXPECT_TRUE(Exists(KeyFile()));
  EXPECT_FALSE(Exists(Stash()));

  ExpectUnstaged();
  ExpectNothingLeft();
}

// A stage whose unmap failed, then a daemon restart (the supervisor lets go
// of the rbd-nbd it ran, which keeps serving): the unstage finds the device
// by its cookie and unmaps it.
TEST_F(StageTransactionTest, UnstageAfterRestartUnmapsWhatAStoppedUndoLeft) {
  FailHostStep("Mount");
  FailUnmap();
  EXPECT_FALSE(Stage(Request()).ok());
  ASSERT_EQ(sup().ReleaseAll().size(), 1u);
  ConnectInSysfs();
  ClearFaults();
  int unmaps = CountArgv(" unmap /dev/nbd3");

  ExpectUnstaged();
  EXPECT_EQ(CountArgv(" unmap /dev/nbd3"), unmaps + 1);
  ExpectNothingLeft();
}

}  // namespace
}  // namespace nbdk::testing
