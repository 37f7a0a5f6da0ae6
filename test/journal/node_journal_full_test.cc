// The node journal on a full disk: ENOSPC at each step of a Put through
// FailingJournalFs, then on a real tmpfs that runs out of blocks or inodes.
// A Put that fails is RESOURCE_EXHAUSTED naming the file it could not
// write, leaves the previous record whole and no temp file behind, and a
// restarted journal reads only whole records.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "journal/node_journal.h"
#include "test/common/tmpfs_mount.h"
#include "test/journal/failing_journal_fs.h"
#include "test/journal/node_journal_fixtures.h"

namespace nbdk {
namespace {

using testing::FailingJournalFs;
using testing::Files;
using testing::FullRecord;
using testing::NodeJournalTest;

// One step of a Put (temp file written, fsynced, renamed; directory
// fsynced) failing with ENOSPC.
struct FullStep {
  const char* name;
  std::function<void(FailingJournalFs&)> inject;
  const char* call;  // the failed call, as the error names it
  bool names_dir;    // the error names the directory, not the temp file
  bool renamed;      // the new record was in place before the failure
  bool sticky;       // an fsync failed: the journal refuses later writes
};

void PrintTo(const FullStep& p, std::ostream* os) { *os << p.name; }

class JournalFullStepTest : public NodeJournalTest, public ::testing::WithParamInterface<FullStep> {};

TEST_P(JournalFullStepTest, PutFailsResourceExhaustedAndARestartReadsAWholeRecord) {
  const FullStep& step = GetParam();
  FailingJournalFs fs;
  VolumeRecord v1 = FullRecord("vol-a");
  VolumeRecord v2 = v1;
  v2.state = VolumeState::kStaging;
  {
    NodeJournal j = OpenJournal(fs);
    ASSERT_TRUE(j.Put(v1).ok());
    step.inject(fs);
    Status s = j.Put(v2);
    EXPECT_EQ(s.code(), Code::kResourceExhausted) << s.ToString();
    std::string file = step.names_dir ? JournalDir() + ":" : PathOf("vol-a") + ".tmp";
    EXPECT_NE(s.message().find(std::string(step.call) + " " + file), std::string::npos) << s.ToString();
    EXPECT_NE(s.message().find("journal put of volume \"vol-a\""), std::string::npos) << s.ToString();
    EXPECT_NE(s.message().find("No space left on device"), std::string::npos) << s.ToString();
    EXPECT_EQ(Files(JournalDir()), (std::vector<std::string>{"LOCK", "v.vol-a.rec"}));
    Status later = j.Put(FullRecord("vol-b"));
    EXPECT_EQ(later.ok(), !step.sticky) << later.ToString();
  }
  NodeJournal restarted = OpenJournal();
  LoadResult loaded = Load(restarted);
  EXPECT_TRUE(loaded.quarantined.empty());
  ASSERT_EQ(loaded.records.size(), step.sticky ? 1u : 2u);
  EXPECT_EQ(loaded.records[0], step.renamed ? v2 : v1);
}

INSTANTIATE_TEST_SUITE_P(
    EveryStep, JournalFullStepTest,
    ::testing::Values(FullStep{"Write", [](FailingJournalFs& fs) { fs.fail_write_number = fs.writes + 1; }, "write",
                               false, false, false},
                      FullStep{"TempFileFsync",
                               [](FailingJournalFs& fs) {
                                 fs.fsync_errno = ENOSPC;
                                 fs.fail_fsync_number = fs.fsyncs + 1;
                               },
                               "fsync", false, false, true},
                      FullStep{"Rename", [](FailingJournalFs& fs) { fs.fail_rename_number = fs.renames + 1; }, "rename",
                               false, false, false},
                      FullStep{"DirectoryFsync",
                               [](FailingJournalFs& fs) {
                                 fs.fsync_errno = ENOSPC;
                                 fs.fail_fsync_number = fs.fsyncs + 2;
                               },
                               "fsync", true, true, true}),
    [](const auto& info) { return std::string(info.param.name); });

// The journal's directory on a tmpfs of its own, which the test fills.
class JournalOnTmpfsTest : public NodeJournalTest {
 protected:
  // False (with mount_error()) where mounting is not permitted.
  bool MountTmpfs(const std::string& options) {
    tmpfs_.emplace(JournalDir(), options);
    return tmpfs_->mounted();
  }
  std::string MountError() const { return tmpfs_ ? tmpfs_->error() : ""; }
  std::optional<test::TmpfsMount> tmpfs_;
};

TEST_F(JournalOnTmpfsTest, OutOfBlocksPutFailsAndTheOldRecordSurvivesARestart) {
  if (!MountTmpfs("size=64k")) GTEST_SKIP() << "needs a tmpfs: " << MountError();
  VolumeRecord v1 = FullRecord("vol-a");
  VolumeRecord v2 = v1;
  v2.map_options.push_back(std::string(16 * 1024, 'x'));  // several pages: a write can stop midway
  std::string filler = JournalDir() + "/filler";
  {
    NodeJournal j = OpenJournal();
    ASSERT_TRUE(j.Put(v1).ok());
    ASSERT_EQ(test::TmpfsMount::FillBlocks(filler), ENOSPC);
    for (const VolumeRecord& r : {v2, FullRecord("vol-b")}) {
      Status s = j.Put(r);
      EXPECT_EQ(s.code(), Code::kResourceExhausted) << s.ToString();
      EXPECT_NE(s.message().find("write " + PathOf(r.volume_id) + ".tmp: No space left on device"), std::string::npos)
          << s.ToString();
    }
    EXPECT_EQ(Files(JournalDir()), (std::vector<std::string>{"LOCK", "filler", "v.vol-a.rec"}));
  }
  // A restart on the still full disk: the journal opens and reads v1 whole.
  NodeJournal j = OpenJournal();
  LoadResult loaded = Load(j);
  ASSERT_EQ(loaded.records.size(), 1u);
  EXPECT_EQ(loaded.records[0], v1);
  EXPECT_TRUE(loaded.quarantined.empty());
  // Removing needs no space; freeing some lets the next Put through.
  EXPECT_TRUE(j.Remove("vol-a").ok());
  std::filesystem::remove(filler);
  ASSERT_TRUE(j.Put(v2).ok());
  EXPECT_EQ(Load(j).records, std::vector<VolumeRecord>{v2});
}

TEST_F(JournalOnTmpfsTest, OutOfInodesPutFailsToCreateItsTempFile) {
  if (!MountTmpfs("size=1m,nr_inodes=16")) GTEST_SKIP() << "needs a tmpfs: " << MountError();
  VolumeRecord v1 = FullRecord("vol-a");
  NodeJournal j = OpenJournal();
  ASSERT_TRUE(j.Put(v1).ok());
  std::filesystem::create_directory(JournalDir() + "/inodes");
  ASSERT_EQ(test::TmpfsMount::FillInodes(JournalDir() + "/inodes"), ENOSPC);
  Status s = j.Put(FullRecord("vol-b"));
  EXPECT_EQ(s.code(), Code::kResourceExhausted) << s.ToString();
  EXPECT_NE(s.message().find("create " + PathOf("vol-b") + ".tmp"), std::string::npos) << s.ToString();
  LoadResult loaded = Load(j);
  EXPECT_EQ(loaded.records, std::vector<VolumeRecord>{v1});
  EXPECT_TRUE(loaded.quarantined.empty());
}

}  // namespace
}  // namespace nbdk
