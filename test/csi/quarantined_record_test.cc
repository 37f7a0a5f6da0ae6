// A staged volume whose journal record is damaged on disk when the daemon
// restarts (journal/node_journal.h quarantines it): the heal does not know
// it, and an unstage neither unmaps its rbd-nbd nor unmounts it - it names
// the record and what is left until an operator removed them. A new stage
// of the volume supersedes the damaged record.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "csi/heal/volume_healer.h"
#include "test/csi/node/node_fixture.h"

namespace nbdk::testing {
namespace {

// Whether `pid` runs (a zombie does not).
bool Running(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t end = stat.rfind(')');  // "<pid> (<comm>) <state> ..."
  return end != std::string::npos && end + 2 < stat.size() && stat[end + 2] != 'Z';
}

class QuarantinedRecordTest : public NodeTest {
 protected:
  // vol-1 staged on /dev/nbd3 and mounted; then a byte of its record flips
  // and the daemon restarts: the supervisor lets go of the rbd-nbd, which
  // keeps serving with the volume's cookie, and the load moves the record
  // aside.
  void StageDamageAndRestart() {
    ASSERT_TRUE(Stage(Request()).ok());
    ConnectInSysfs();
    node_->options.mountinfo_path = dir_ + "/mountinfo";
    std::ofstream(dir_ + "/mountinfo") << "40 22 43:3 / " << MountPoint()
                                       << " rw,nosuid,nodev shared:2 - ext4 /dev/nbd3 rw\n";
    std::string path = dir_ + "/journal/v.vol-1.rec";
    std::string bytes = ReadFile(path);
    bytes[bytes.size() / 2] ^= 0x20;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    server_pid_ = Snap(kVolume).pid;
    ASSERT_EQ(sup().ReleaseAll().size(), 1u);
    quarantined_ = ReloadJournal();
    ASSERT_EQ(quarantined_.size(), 1u);
  }

  // What an operator does by hand: unmount (and remove the mount point),
  // and unmap (the server exits, its watch goes).
  void RemoveByHand() {
    std::ofstream(dir_ + "/mountinfo").flush();
    host_.mounted.erase(MountPoint());
    std::filesystem::remove(MountPoint());
    std::filesystem::remove(dir_ + "/sys/block/nbd3/backend");
    ASSERT_EQ(::kill(server_pid_, SIGTERM), 0);
    ASSERT_TRUE(RunUntil([&] { return !Running(server_pid_); }));
    std::ofstream(dir_ + "/fake/img.watchers").flush();
  }

  HealSummary Heal() {
    HealOptions options;
    options.evidence.proc_root = dir_ + "/proc";
    options.evidence.sysfs_root = dir_ + "/sys";
    options.evidence.rbd_nbd_path = FAKE_RBD_NBD_PATH;
    options.mountinfo_path = dir_ + "/mountinfo";
    std::optional<HealSummary> got;
    HealVolumes(*node_, options, [&](HealSummary s) { got = s; });
    EXPECT_TRUE(RunUntil([&] { return got.has_value(); }));
    return got.value_or(HealSummary{});
  }

  int server_pid_ = 0;
  std::vector<QuarantinedFile> quarantined_;
};

TEST_F(QuarantinedRecordTest, HealAndUnstageLeaveItsDeviceAndMountAlone) {
  StageDamageAndRestart();
  const QuarantinedFile& q = quarantined_[0];
  EXPECT_EQ(q.file, "v.vol-1.rec");
  EXPECT_NE(q.reason.message().find("checksum mismatch"), std::string::npos) << q.reason.ToString();
  EXPECT_EQ(Record(), nullptr);
  ASSERT_NE(volumes_->FindQuarantined(kVolume), nullptr);
  size_t host_calls = host_.calls.size();
  int unmaps = CountArgv(" unmap ");

  EXPECT_EQ(Heal().volumes, 0u);
  Status s = Unstage();
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s.ToString();
  for (const std::string& named : {q.moved_to, std::string("checksum mismatch"), std::string("/dev/nbd3 (its cookie)"),
                                   MountPoint() + " mounted"}) {
    EXPECT_NE(s.message().find(named), std::string::npos) << named << " in " << s.ToString();
  }
  EXPECT_EQ(host_.calls.size(), host_calls) << "no unmount, no removal";
  EXPECT_EQ(CountArgv(" unmap "), unmaps);
  EXPECT_TRUE(Running(server_pid_)) << "its rbd-nbd still serves";
  EXPECT_TRUE(Exists(KeyFile()));

  RemoveByHand();
  Status after = Unstage();
  EXPECT_TRUE(after.ok()) << after.ToString();
}

TEST_F(QuarantinedRecordTest, ANewStageSupersedesTheDamagedRecord) {
  StageDamageAndRestart();
  RemoveByHand();
  Status s = Stage(Request());
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(volumes_->FindQuarantined(kVolume), nullptr);
  EXPECT_TRUE(volumes_->Quarantined().empty());
  EXPECT_TRUE(Exists(quarantined_[0].moved_to)) << "the damaged copy is kept";
  ExpectUnstaged();
  ExpectNothingLeft();
}

}  // namespace
}  // namespace nbdk::testing
