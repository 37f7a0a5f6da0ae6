// NodeUnstageVolume (csi/node/volume_operations.h) failing at every step in
// turn: the record stays journaled while anything of the volume is left, so
// a retry finishes the unstage.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "test/csi/node/node_fixture.h"

namespace nbdk::testing {
namespace {

struct UnstageFault {
  std::string name;
  bool unmapped = false;  // the device is unmapped by the failed attempt
  std::function<void(NodeTest&)> inject;
};

void PrintTo(const UnstageFault& f, std::ostream* os) { *os << f.name; }

class UnstageFaultTest : public NodeTest, public ::testing::WithParamInterface<UnstageFault> {};

std::vector<UnstageFault> UnstageFaults() {
  auto host = [](const std::string& step) { return [step](NodeTest& t) { t.FailHostStep(step); }; };
  return {
      {"Unmount", false, host("Unmount")},
      {"RemoveMountPoint", false, host("RemoveMountPoint")},
      {"CheckDeviceUnused", false, host("CheckDeviceUnused")},
      {"Unmap", false, [](NodeTest& t) { t.FailUnmap(); }},
      {"RemoveKeyFile", true, host("RemoveKeyFile")},
      {"RemoveStash", true, host("RemoveStash")},
  };
}

TEST_P(UnstageFaultTest, KeepsTheRecordUntilARetryFinishes) {
  ASSERT_TRUE(Stage(Request()).ok());
  GetParam().inject(*this);
  Status s = Unstage();
  EXPECT_FALSE(s.ok());
  ASSERT_NE(Record(), nullptr);
  EXPECT_EQ(Record()->state, VolumeState::kStaged);
  EXPECT_EQ(JournalFiles(), 1u);
  EXPECT_EQ(sup().Snapshots().empty(), GetParam().unmapped);

  ClearFaults();
  ExpectUnstaged();
  ExpectNothingLeft();
}

INSTANTIATE_TEST_SUITE_P(EveryStep, UnstageFaultTest, ::testing::ValuesIn(UnstageFaults()),
                         [](const auto& info) { return info.param.name; });

class VolumeUnstageTest : public NodeTest {};

// The journal's last fsync fails: the key file and stash are gone and the
// device unmapped, but the record stays in the table (the file's removal
// is not known to be durable) and the journal refuses further writes
// until the daemon restarts.
TEST_F(VolumeUnstageTest, FailedJournalRemovalKeepsTheRecord) {
  ASSERT_TRUE(Stage(Request()).ok());
  journal_fs_.fail_fsync_number = journal_fs_.fsyncs + 1;
  EXPECT_FALSE(Unstage().ok());
  ASSERT_NE(Record(), nullptr);
  EXPECT_TRUE(sup().Snapshots().empty());
  EXPECT_FALSE(Exists(KeyFile()));
  EXPECT_FALSE(Exists(Stash()));
  EXPECT_FALSE(Unstage().ok());  // sticky: the journal is read-only now
}

// A published volume is not unstaged: nothing is touched.
TEST_F(VolumeUnstageTest, PublishedVolumeIsLeftAlone) {
  ASSERT_TRUE(Stage(Request()).ok());
  std::filesystem::create_directories(dir_ + "/pod");
  PublishRequest p{kVolume, Staging(), dir_ + "/pod/mnt", Request().capability, false};
  ASSERT_TRUE(Run([&](auto done) { PublishVolume(*node_, p, Lock(), done); }).ok());
  size_t calls = host_.calls.size();
  Status s = Unstage();
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s.ToString();
  EXPECT_EQ(host_.calls.size(), calls);
  EXPECT_EQ(sup().Snapshots().size(), 1u);

  UnpublishRequest u{kVolume, p.target_path};
  ASSERT_TRUE(Run([&](auto done) { UnpublishVolume(*node_, u, Lock(), done); }).ok());
  ExpectUnstaged();
  ExpectNothingLeft();
}

// A plain volume's unstage never asks device-mapper (a host or unit without
// it must still unstage).
TEST_F(VolumeUnstageTest, APlainVolumeNeverAsksDeviceMapper) {
  ASSERT_TRUE(Stage(Request()).ok());
  ExpectUnstaged();
  EXPECT_EQ(std::count(host_.calls.begin(), host_.calls.end(), "LuksBacking"), 0);
}

// A volume another plugin staged (ceph-csi's node plugin, before a switch
// to nbdkeeper): no record of it here, its device carries the volume ID as
// its cookie and its filesystem is mounted at the staging mount point. The
// unstage touches neither and names both; once an operator removed them it
// is OK, as the unstage of a volume never staged is.
TEST_F(VolumeUnstageTest, AVolumeAnotherPluginStagedIsNamedNeverTouched) {
  node_->options.mountinfo_path = dir_ + "/mountinfo";
  std::ofstream(dir_ + "/mountinfo").flush();
  EXPECT_TRUE(Unstage().ok()) << "never staged anywhere";
  std::filesystem::create_directories(dir_ + "/sys/block/nbd3");
  ConnectInSysfs();
  std::ofstream(dir_ + "/mountinfo") << "40 22 43:3 / " << MountPoint() << " rw shared:2 - ext4 /dev/nbd3 rw\n";
  size_t calls = host_.calls.size();
  Status s = Unstage();
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s.ToString();
  for (const std::string& named :
       {std::string("is not in the node journal"), std::string("/dev/nbd3 (its cookie)"), MountPoint() + " mounted"}) {
    EXPECT_NE(s.message().find(named), std::string::npos) << named << " in " << s.ToString();
  }
  EXPECT_EQ(host_.calls.size(), calls) << "no unmount, no removal";
  EXPECT_EQ(CountArgv(" unmap "), 0);

  std::ofstream(dir_ + "/mountinfo").flush();
  std::filesystem::remove(dir_ + "/sys/block/nbd3/backend");
  Status after = Unstage();
  EXPECT_TRUE(after.ok()) << after.ToString();
}

class EncryptedUnstageTest : public NodeTest {
 protected:
  // A staged volume whose record names its open mapper, as an encrypted
  // stage leaves it (the LUKS step itself needs a cluster: controller_vm).
  void StageEncrypted(const std::string& mapper_device = "") {
    ASSERT_TRUE(Stage(Request()).ok());
    VolumeRecord r = *Record();
    r.luks_mapper = std::string("luks-rbd-") + kVolume;
    ASSERT_TRUE(Run([&](auto done) { volumes_->Put(r, done); }).ok());
    host_.open_mappers[r.luks_mapper] = mapper_device.empty() ? r.nbd_device : mapper_device;
  }
};

TEST_F(EncryptedUnstageTest, TheMapperIsClosedBeforeTheDeviceIsUnmapped) {
  StageEncrypted();
  ExpectUnstaged();
  EXPECT_TRUE(host_.open_mappers.empty());
  auto close = std::find(host_.calls.begin(), host_.calls.end(), "CloseLuks");
  auto check = std::find(host_.calls.begin(), host_.calls.end(), "CheckDeviceUnused");
  ASSERT_NE(close, host_.calls.end());
  EXPECT_LT(close, check) << "the mapper holds the device: closed first";
}

TEST_F(EncryptedUnstageTest, AFailedCloseKeepsTheRecordAndTheMapping) {
  StageEncrypted();
  FailHostStep("CloseLuks");
  EXPECT_FALSE(Unstage().ok());
  ASSERT_NE(Record(), nullptr);
  EXPECT_EQ(sup().Snapshots().size(), 1u);
  ClearFaults();
  ExpectUnstaged();
  EXPECT_TRUE(host_.open_mappers.empty());
}

TEST_F(EncryptedUnstageTest, AMapperOnAnotherDeviceIsNotThisVolumesToClose) {
  StageEncrypted("/dev/nbd9");
  Status s = Unstage();
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("/dev/nbd9"), std::string::npos) << s.message();
  EXPECT_EQ(host_.open_mappers.size(), 1u);
  EXPECT_NE(Record(), nullptr);
}

}  // namespace
}  // namespace nbdk::testing
