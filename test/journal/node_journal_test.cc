// NodeJournal: round trips, quarantine of damaged files, leftover temp
// files, the LOCK, and the sticky error after an fsync failure.
#include "journal/node_journal.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <functional>
#include <set>
#include <thread>
#include <utility>

#include "journal/node_record_file_name.h"
#include "journal/node_record_frame.h"
#include "test/common/fifo_guard.h"
#include "test/journal/failing_journal_fs.h"
#include "test/journal/node_journal_fixtures.h"

namespace nbdk {
namespace {

using testing::FailingJournalFs;
using testing::Files;
using testing::FullRecord;
using testing::NodeJournalTest;
using testing::ReadFile;
using testing::WriteFile;

TEST_F(NodeJournalTest, PutLoadRemoveRoundTrip) {
  VolumeRecord a = FullRecord("vol-a"), b = FullRecord("pvc_b.c");
  {
    NodeJournal j = OpenJournal();
    EXPECT_TRUE(Load(j).records.empty());
    ASSERT_TRUE(j.Put(b).ok());
    ASSERT_TRUE(j.Put(a).ok());
    a.state = VolumeState::kStaging;
    a.published_targets.clear();
    ASSERT_TRUE(j.Put(a).ok());  // replaces
    LoadResult loaded = Load(j);
    ASSERT_EQ(loaded.records.size(), 2u);
    EXPECT_EQ(loaded.records[0], b);  // sorted by volume id
    EXPECT_EQ(loaded.records[1], a);
    EXPECT_TRUE(loaded.quarantined.empty());

    ASSERT_TRUE(j.Remove("pvc_b.c").ok());
    EXPECT_TRUE(j.Remove("pvc_b.c").ok());  // absent is OK
    EXPECT_TRUE(j.Remove("never-existed").ok());
  }
  NodeJournal reopened = OpenJournal();
  LoadResult loaded = Load(reopened);
  ASSERT_EQ(loaded.records.size(), 1u);
  EXPECT_EQ(loaded.records[0], a);
  EXPECT_EQ(Files(JournalDir()), (std::vector<std::string>{"LOCK", "v.vol-a.rec"}));
  EXPECT_EQ((std::filesystem::status(PathOf("vol-a")).permissions() & std::filesystem::perms::all),
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

TEST_F(NodeJournalTest, ConcurrentPutsFromPoolThreadsAllLand) {
  NodeJournal j = OpenJournal();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        VolumeRecord r = FullRecord("vol-" + std::to_string(t));
        r.updated_ms = i;
        if (!j.Put(r).ok()) ++failures;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  LoadResult loaded = Load(j);
  ASSERT_EQ(loaded.records.size(), 4u);
  for (const VolumeRecord& r : loaded.records) EXPECT_EQ(r.updated_ms, 9) << r.volume_id;
  EXPECT_TRUE(loaded.quarantined.empty());
}

TEST_F(NodeJournalTest, RejectsInvalidVolumeIds) {
  NodeJournal j = OpenJournal();
  EXPECT_EQ(j.Put(FullRecord("")).code(), Code::kInvalidArgument);
  Status s = j.Put(FullRecord(std::string(129, 'x')));
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("129 bytes"), std::string::npos) << s.message();
  EXPECT_EQ(j.Remove("").code(), Code::kInvalidArgument);
}

TEST_F(NodeJournalTest, SecondOpenIsRefusedWhileLocked) {
  NodeJournal j = OpenJournal();
  Result<NodeJournal> second = NodeJournal::Open(JournalDir());
  EXPECT_EQ(second.status().code(), Code::kUnavailable);
  EXPECT_NE(second.status().message().find("LOCK"), std::string::npos);
}

struct Damage {
  const char* name;
  std::function<std::string(const std::string& good)> apply;
  const char* reason;  // expected in the quarantine reason
};

class QuarantineTest : public NodeJournalTest, public ::testing::WithParamInterface<Damage> {};

TEST_P(QuarantineTest, MovesTheDamagedFileAsideAndLoadsTheRest) {
  NodeJournal j = OpenJournal();
  for (const char* id : {"good-1", "victim", "good-2"}) ASSERT_TRUE(j.Put(FullRecord(id)).ok());
  std::string damaged = GetParam().apply(ReadFile(PathOf("victim")));
  WriteFile(PathOf("victim"), damaged);

  LoadResult loaded = Load(j);
  ASSERT_EQ(loaded.records.size(), 2u);
  EXPECT_EQ(loaded.records[0], FullRecord("good-1"));
  EXPECT_EQ(loaded.records[1], FullRecord("good-2"));
  ASSERT_EQ(loaded.quarantined.size(), 1u);
  const QuarantinedFile& q = loaded.quarantined[0];
  EXPECT_EQ(q.file, "v.victim.rec");
  EXPECT_EQ(q.reason.code(), Code::kCorruption);
  EXPECT_NE(q.reason.message().find(GetParam().reason), std::string::npos) << q.reason.message();
  EXPECT_NE(q.reason.message().find(PathOf("victim")), std::string::npos) << q.reason.message();
  EXPECT_TRUE(q.moved_to.starts_with(JournalDir() + "/quarantine/v.victim.rec.")) << q.moved_to;
  EXPECT_EQ(ReadFile(q.moved_to), damaged);  // byte for byte
  EXPECT_FALSE(std::filesystem::exists(PathOf("victim")));

  // Nothing left to quarantine; the volume can be journaled again.
  EXPECT_TRUE(Load(j).quarantined.empty());
  ASSERT_TRUE(j.Put(FullRecord("victim")).ok());
  EXPECT_EQ(Load(j).records.size(), 3u);
  EXPECT_EQ(ReadFile(q.moved_to), damaged);
}

std::string FrameOf(const std::string& payload) { return EncodeRecordFrame(payload); }

// A record file as the release before VolumeState wrote it, with the state
// as the literal strings "staged" and "staging": it loads, and writing the
// loaded record again gives the same bytes.
TEST_F(NodeJournalTest, LoadsRecordsWrittenWithLiteralStates) {
  const std::string id = "0001-0009-rook-ceph-0000000000000002-b0285c97";
  const std::string json =
      R"({"volume_id":"0001-0009-rook-ceph-0000000000000002-b0285c97","cluster_id":"rook-ceph",)"
      R"("monitors":["10.0.0.1:6789"],"pool":"rbd","rados_namespace":"","image":"csi-vol-b0285c97",)"
      R"("user_id":"csi-rbd-node","keyfile_path":"/run/nbdkeeper/keys/k.key","ceph_conf_path":"",)"
      R"("nbd_device":"/dev/nbd3","cookie":"c1","map_options":["--try-netlink"],"fs_type":"ext4",)"
      R"("block":false,"read_only":false,"mount_flags":[],"staging_path":"/var/lib/kubelet/s",)"
      R"("mount_point_created":true,"published_targets":[{"path":"/var/lib/kubelet/p","read_only":false,)"
      R"("created":true,"mount_flags":[]}],"rbd_nbd_pid":4242,"boot_id":"b1","reattach_timeout_s":300,)"
      R"("created_ms":1,"updated_ms":2,"state":"staged"})";
  std::string staging = json;
  staging.replace(staging.rfind("staged"), 6, "staging");
  {
    NodeJournal j = OpenJournal();  // creates the directory
  }
  for (const auto& [text, state] : {std::pair{json, VolumeState::kStaged}, std::pair{staging, VolumeState::kStaging}}) {
    WriteFile(PathOf(id), FrameOf(text));
    NodeJournal j = OpenJournal();
    LoadResult loaded = Load(j);
    ASSERT_EQ(loaded.records.size(), 1u);
    EXPECT_TRUE(loaded.quarantined.empty());
    EXPECT_EQ(loaded.records[0].state, state);
    EXPECT_EQ(loaded.records[0].volume_id, id);
    EXPECT_EQ(EncodeVolumeRecord(loaded.records[0]), text);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Damages, QuarantineTest,
    ::testing::Values(
        Damage{"Truncated", [](const std::string& g) { return g.substr(0, g.size() - 5); }, "truncated payload"},
        Damage{"TruncatedHeader", [](const std::string& g) { return g.substr(0, 7); }, "truncated header"},
        Damage{"ZeroLength", [](const std::string&) { return std::string(); }, "empty file (0 bytes)"},
        Damage{"BadMagic", [](const std::string& g) { return "X" + g.substr(1); }, "bad magic"},
        Damage{"FlippedPayloadByte",
               [](const std::string& g) {
                 std::string d = g;
                 d[kRecordFrameHeaderSize + d.size() / 3] ^= 0x20;
                 return d;
               },
               "checksum mismatch"},
        Damage{"FlippedChecksumByte",
               [](const std::string& g) {
                 std::string d = g;
                 d[13] ^= 0x01;
                 return d;
               },
               "checksum mismatch"},
        Damage{"BadJson", [](const std::string&) { return FrameOf("{\"volume_id\": \"victim\","); },
               "JSON parse error"},
        Damage{"MissingField", [](const std::string&) { return FrameOf("{\"volume_id\": \"victim\"}"); },
               "field cluster_id: missing"},
        Damage{"OtherVolume", [](const std::string&) { return FrameOf(EncodeVolumeRecord(FullRecord("good-1"))); },
               "holds volume \"good-1\", whose file is v.good-1.rec"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(NodeJournalTest, PlantedFifoOrSymlinkIsQuarantinedWithoutBlocking) {
  NodeJournal j = OpenJournal();
  std::string fifo = PathOf("pvc-fifo");
  std::string link = PathOf("pvc-link");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  WriteFile(scratch_.path() + "/elsewhere", "a record frame elsewhere");
  ASSERT_EQ(::symlink((scratch_.path() + "/elsewhere").c_str(), link.c_str()), 0);
  Result<LoadResult> loaded = Status::Internal("not loaded");
  ASSERT_TRUE(test::ReturnsDespiteFifo(fifo, [&] { loaded = j.LoadAll(); })) << "LoadAll blocked opening a FIFO";
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->quarantined.size(), 2u);
  std::string reasons = loaded->quarantined[0].reason.ToString() + " | " + loaded->quarantined[1].reason.ToString();
  EXPECT_NE(reasons.find(fifo + ": is a FIFO, not a regular file"), std::string::npos) << reasons;
  EXPECT_NE(reasons.find(link + ": is a symlink, not followed"), std::string::npos) << reasons;
  EXPECT_EQ(ReadFile(scratch_.path() + "/elsewhere"), "a record frame elsewhere");
}

TEST_F(NodeJournalTest, FifoAtTheTempPathFailsThePutWithoutBlocking) {
  NodeJournal j = OpenJournal();
  std::string tmp = PathOf("pvc-1") + ".tmp";
  ASSERT_EQ(::mkfifo(tmp.c_str(), 0600), 0);
  Status put = Status::Internal("not written");
  ASSERT_TRUE(test::ReturnsDespiteFifo(tmp, [&] { put = j.Put(FullRecord("pvc-1")); })) << "Put blocked on a FIFO";
  EXPECT_FALSE(put.ok());
  EXPECT_NE(put.message().find(tmp), std::string::npos) << put.ToString();
}

TEST_F(NodeJournalTest, QuarantineNeverOverwritesAnEarlierCopy) {
  NodeJournal j = OpenJournal();
  std::set<std::string> moved;
  for (int i = 0; i < 3; ++i) {
    WriteFile(PathOf("victim"), "garbage " + std::to_string(i));
    LoadResult loaded = Load(j);
    ASSERT_EQ(loaded.quarantined.size(), 1u);
    EXPECT_TRUE(moved.insert(loaded.quarantined[0].moved_to).second);
  }
  std::set<std::string> contents;
  for (const std::string& path : moved) contents.insert(ReadFile(path));
  EXPECT_EQ(contents, (std::set<std::string>{"garbage 0", "garbage 1", "garbage 2"}));
}

TEST_F(NodeJournalTest, OpenRemovesLeftoverTempFilesAndLeavesOthers) {
  {
    NodeJournal j = OpenJournal();
    ASSERT_TRUE(j.Put(FullRecord("vol-a")).ok());
  }
  std::string good = ReadFile(PathOf("vol-a"));
  WriteFile(PathOf("vol-a") + ".tmp", good.substr(0, 30));  // a Put torn by a crash
  WriteFile(PathOf("vol-b") + ".tmp", "");
  WriteFile(JournalDir() + "/NOTES", "operator's file");
  NodeJournal j = OpenJournal();
  EXPECT_EQ(Files(JournalDir()), (std::vector<std::string>{"LOCK", "NOTES", "v.vol-a.rec"}));
  LoadResult loaded = Load(j);
  ASSERT_EQ(loaded.records.size(), 1u);
  EXPECT_EQ(loaded.records[0], FullRecord("vol-a"));
  EXPECT_TRUE(loaded.quarantined.empty());
  EXPECT_EQ(ReadFile(JournalDir() + "/NOTES"), "operator's file");
}

TEST_F(NodeJournalTest, FailedWriteKeepsTheOldRecordAndIsNotSticky) {
  FailingJournalFs fs;
  NodeJournal j = OpenJournal(fs);
  VolumeRecord v1 = FullRecord("vol-a");
  ASSERT_TRUE(j.Put(v1).ok());
  fs.fail_writes = true;
  VolumeRecord v2 = v1;
  v2.state = VolumeState::kStaging;
  Status s = j.Put(v2);
  EXPECT_EQ(s.code(), Code::kResourceExhausted);
  EXPECT_NE(s.message().find("vol-a"), std::string::npos) << s.message();
  EXPECT_EQ(Files(JournalDir()), (std::vector<std::string>{"LOCK", "v.vol-a.rec"}));  // no temp file
  EXPECT_EQ(Load(j).records.at(0), v1);
  fs.fail_writes = false;
  ASSERT_TRUE(j.Put(v2).ok());
  EXPECT_EQ(Load(j).records.at(0), v2);
}

// fsync number 1 of a Put is the temp file's, number 2 the directory's.
class StickyFsyncTest : public NodeJournalTest, public ::testing::WithParamInterface<int> {};

TEST_P(StickyFsyncTest, FsyncFailureMakesTheJournalRefuseWrites) {
  FailingJournalFs fs;
  VolumeRecord v1 = FullRecord("vol-a");
  VolumeRecord v2 = v1;
  v2.updated_ms += 1000;
  {
    NodeJournal j = OpenJournal(fs);
    ASSERT_TRUE(j.Put(v1).ok());
    fs.fail_fsync_number = fs.fsyncs + GetParam();
    Status s = j.Put(v2);
    EXPECT_EQ(s.code(), Code::kIoError);
    EXPECT_NE(s.message().find("fsync"), std::string::npos) << s.message();

    // Sticky: later calls fail although the file system works again.
    for (Status later : {j.Put(v2), j.Put(FullRecord("vol-b")), j.Remove("vol-a"), j.LoadAll().status()}) {
      EXPECT_EQ(later.code(), Code::kIoError);
      EXPECT_NE(later.message().find("refuses writes after an earlier fsync failure"), std::string::npos)
          << later.message();
    }
    EXPECT_FALSE(std::filesystem::exists(PathOf("vol-b")));
    EXPECT_TRUE(std::filesystem::exists(PathOf("vol-a")));
  }
  // A fresh journal (the daemon restarted) works, holding the old or the new record.
  NodeJournal j = OpenJournal();
  LoadResult loaded = Load(j);
  ASSERT_EQ(loaded.records.size(), 1u);
  EXPECT_EQ(loaded.records[0], GetParam() == 1 ? v1 : v2);
  EXPECT_TRUE(loaded.quarantined.empty());
  EXPECT_TRUE(j.Put(FullRecord("vol-b")).ok());
}

INSTANTIATE_TEST_SUITE_P(FileOrDirectory, StickyFsyncTest, ::testing::Values(1, 2),
                         [](const auto& info) { return info.param == 1 ? "TempFile" : "Directory"; });

TEST_F(NodeJournalTest, FailedDirectoryFsyncOnRemoveIsSticky) {
  FailingJournalFs fs;
  NodeJournal j = OpenJournal(fs);
  ASSERT_TRUE(j.Put(FullRecord("vol-a")).ok());
  fs.fail_fsync_number = fs.fsyncs + 1;
  EXPECT_EQ(j.Remove("vol-a").code(), Code::kIoError);
  EXPECT_NE(j.Put(FullRecord("vol-a")).message().find("refuses writes"), std::string::npos);
}

}  // namespace
}  // namespace nbdk
