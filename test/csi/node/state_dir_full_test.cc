// The Node operations with the state directory full: the node journal's
// writes fail with ENOSPC (FailingJournalFs). A stage fails
// RESOURCE_EXHAUSTED naming the journal file and undoes every step; a
// volume staged before is not touched; an unstage needs no space; a
// re-attach whose record cannot be written keeps serving, and its record
// is written once the disk has room again.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <memory>
#include <ostream>
#include <string>

#include "csi/grpc_status.h"
#include "csi/node/server_journal.h"
#include "test/csi/node/node_fixture.h"

namespace nbdk::testing {
namespace {

class StateDirFullTest : public NodeTest {
 protected:
  static constexpr const char* kOther = "vol-2";

  void TearDown() override {
    server_journal_.reset();
    NodeTest::TearDown();
  }

  // A second volume, image rbd/img2 on /dev/nbd4, staged while there is room.
  void StageOther() {
    Behave("img2.map", "device=/dev/nbd4");
    MakeSysfs(4);
    StageRequest r = Request();
    r.volume_id = kOther;
    r.image_name = "img2";
    r.staging_target_path = dir_ + "/staging2";
    std::filesystem::create_directories(r.staging_target_path);
    Result<VolumeOpLock> lock = volumes_->Lock(kOther);
    ASSERT_TRUE(lock.ok()) << lock.status().ToString();
    Status s = Run([&](auto done) { StageVolume(*node_, r, std::move(*lock), done); });
    ASSERT_TRUE(s.ok()) << s.ToString();
    other_ = *volumes_->Find(kOther);
  }

  // The second volume is as it was: served by the same rbd-nbd, mounted,
  // journaled.
  void ExpectOtherUntouched() {
    auto snap = sup().Snapshot(kOther);
    ASSERT_TRUE(snap.has_value());
    EXPECT_EQ(snap->state, MappingState::kConnected);
    EXPECT_EQ(snap->pid, other_.rbd_nbd_pid);
    EXPECT_TRUE(host_.mounted.count(dir_ + "/staging2/" + kOther));
    EXPECT_EQ(CountArgv(" unmap /dev/nbd4"), 0);
    ASSERT_NE(volumes_->Find(kOther), nullptr);
    EXPECT_EQ(*volumes_->Find(kOther), other_);
    EXPECT_TRUE(Exists(dir_ + "/journal/v.vol-2.rec"));
  }

  // Nothing of vol-1 is left: mapping, mount, key file, stash, record.
  void ExpectVolumeGone() {
    EXPECT_FALSE(sup().Snapshot(kVolume).has_value());
    EXPECT_FALSE(host_.mounted.count(MountPoint()));
    EXPECT_FALSE(Exists(MountPoint()));
    EXPECT_FALSE(Exists(KeyFile()));
    EXPECT_FALSE(Exists(Stash()));
    EXPECT_EQ(Record(), nullptr);
    EXPECT_FALSE(Exists(dir_ + "/journal/v.vol-1.rec"));
    EXPECT_FALSE(Exists(dir_ + "/journal/v.vol-1.rec.tmp"));
  }

  VolumeRecord other_;
  std::unique_ptr<ServerJournal> server_journal_;
};

// Which of the stage's two journal writes finds the disk full.
struct FullAt {
  const char* name;
  int write;  // 1: the "staging" record, 2: the "staged" one
  bool block;
};

void PrintTo(const FullAt& p, std::ostream* os) { *os << p.name; }

class StageOnFullDiskTest : public StateDirFullTest, public ::testing::WithParamInterface<FullAt> {};

TEST_P(StageOnFullDiskTest, FailsResourceExhaustedUndoesItAllAndLeavesTheOtherVolumeServed) {
  StageOther();
  journal_fs_.fail_write_number = journal_fs_.writes + GetParam().write;
  Status s = Stage(Request(GetParam().block));
  EXPECT_EQ(s.code(), Code::kResourceExhausted) << s.ToString();
  EXPECT_EQ(ToGrpcStatus(s).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.message().find("node journal: journal put of volume \"vol-1\": write " + dir_ +
                             "/journal/v.vol-1.rec.tmp: No space left on device"),
            std::string::npos)
      << s.ToString();
  EXPECT_EQ(s.message().find("cleanup stopped"), std::string::npos) << s.ToString();
  ExpectVolumeGone();
  EXPECT_EQ(CountArgv(" unmap /dev/nbd3"), GetParam().write == 2 ? 1 : 0);
  ExpectOtherUntouched();

  // Room again: nothing of the failed stage is in the way.
  ClearFaults();
  ASSERT_TRUE(Stage(Request(GetParam().block)).ok());
  ExpectUnstaged();
  ExpectOtherUntouched();
}

INSTANTIATE_TEST_SUITE_P(EachJournalWrite, StageOnFullDiskTest,
                         ::testing::Values(FullAt{"StagingRecord", 1, false}, FullAt{"StagedRecord", 2, false},
                                           FullAt{"BlockStagedRecord", 2, true}),
                         [](const auto& info) { return std::string(info.param.name); });

// ENOSPC from the fsync of the "staged" record: the journal is read-only
// from then on (an fsync failure is sticky), so the undo unmaps and
// unmounts but cannot remove the "staging" record, and says so. A restart
// (a fresh journal) finds that record, and an unstage finishes it.
TEST_F(StateDirFullTest, FullAtTheStagedRecordsFsyncLeavesOnlyTheStagingRecord) {
  StageOther();
  journal_fs_.fsync_errno = ENOSPC;
  journal_fs_.fail_fsync_number = journal_fs_.fsyncs + 3;  // staging: file, dir; staged: file
  Status s = Stage(Request());
  EXPECT_EQ(s.code(), Code::kResourceExhausted) << s.ToString();
  EXPECT_NE(s.message().find("fsync " + dir_ + "/journal/v.vol-1.rec.tmp: No space left on device"), std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("cleanup stopped at forget volume"), std::string::npos) << s.ToString();
  EXPECT_FALSE(sup().Snapshot(kVolume).has_value());
  EXPECT_FALSE(host_.mounted.count(MountPoint()));
  EXPECT_FALSE(Exists(KeyFile()));
  ExpectOtherUntouched();

  EXPECT_TRUE(ReloadJournal().empty());
  ASSERT_NE(Record(), nullptr);
  EXPECT_EQ(Record()->state, VolumeState::kStaging);
  ExpectUnstaged();
  ExpectVolumeGone();
  ExpectOtherUntouched();
}

// Unstaging frees space and writes none: it succeeds on a full disk.
TEST_F(StateDirFullTest, UnstageSucceedsWhileEveryWriteFails) {
  StageOther();
  ASSERT_TRUE(Stage(Request()).ok());
  journal_fs_.fail_writes = true;
  ExpectUnstaged();
  ExpectVolumeGone();
  ExpectOtherUntouched();
}

// rbd-nbd dies while the disk is full: the re-attach serves the device at
// once, its pid cannot be journaled and is retried until there is room.
TEST_F(StateDirFullTest, AReattachsRecordIsRetriedUntilTheDiskHasRoom) {
  server_journal_ = std::make_unique<ServerJournal>(*node_, /*write_retry_ms=*/100);
  ASSERT_TRUE(Stage(Request()).ok());
  int old_pid = Record()->rbd_nbd_pid;
  journal_fs_.fail_writes = true;
  ASSERT_EQ(::kill(old_pid, SIGKILL), 0);
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts(kVolume, 1); }));
  int new_pid = Snap(kVolume).pid;
  EXPECT_NE(new_pid, old_pid);

  int failed_before = journal_fs_.writes;
  RunFor(450);
  EXPECT_GE(journal_fs_.writes - failed_before, 2) << "a failed write is tried again";
  EXPECT_EQ(Record()->rbd_nbd_pid, old_pid);
  EXPECT_EQ(Snap(kVolume).state, MappingState::kConnected);

  journal_fs_.fail_writes = false;
  ASSERT_TRUE(RunUntil([&] { return Record()->rbd_nbd_pid == new_pid && Record()->rbd_clients.size() == 2; }));
  server_journal_.reset();
  EXPECT_TRUE(ReloadJournal().empty());
  ASSERT_NE(Record(), nullptr);
  EXPECT_EQ(Record()->rbd_nbd_pid, new_pid) << "on disk, for the next restart";
  EXPECT_EQ(Record()->rbd_clients.size(), 2u) << "the dead server's client and the new one's";
  EXPECT_FALSE(Record()->rbd_clients_before.has_value()) << "kept only until the new server's clients are known";
  ExpectUnstaged();
  ExpectNothingLeft();
}

}  // namespace
}  // namespace nbdk::testing
