// Healing after a daemon restart (csi/heal/volume_healer.h) on the host: a
// staged volume's rbd-nbd outlives the daemon (the Supervisor lets go of
// it), a fake /proc and sysfs show it, and HealVolumes adopts it, journals
// its pid and remounts what is missing - failing at every step in turn.
// A failed step is counted and logged, the rest still runs, and the record
// stays journaled as staged (healing never forgets a volume). A snapshot's
// volume is adopted and re-attached as that snapshot, never the image.
#include "csi/heal/volume_healer.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "test/csi/node/node_fixture.h"

namespace nbdk::testing {
namespace {

class VolumeHealerTest : public NodeTest {
 protected:
  std::string Target() const { return dir_ + "/pod/mnt"; }

  void StageAndPublish() {
    ASSERT_TRUE(Stage(Request()).ok());
    std::filesystem::create_directories(dir_ + "/pod");
    PublishRequest p{kVolume, Staging(), Target(), Request().capability, false};
    ASSERT_TRUE(Run([&](auto done) { PublishVolume(*node_, p, Lock(), done); }).ok());
  }

  // The daemon "restarts": the Supervisor forgets the mapping (rbd-nbd
  // keeps serving), no mount survives in our view of the mount table, and
  // /proc and sysfs show the server, whose argv maps `spec`, with our
  // cookie. Returns its pid; 0 when there is none to show.
  int Restart(const std::string& spec = "rbd/img") {
    EXPECT_EQ(sup().ReleaseAll().size(), 1u);
    host_.mounted.clear();
    ConnectInSysfs();
    int pid = 0;
    std::ifstream(dir_ + "/fake/nbd3.pid") >> pid;
    EXPECT_GT(pid, 0);
    if (pid <= 0) return 0;
    std::ofstream(dir_ + "/sys/block/nbd3/pid") << pid << "\n";
    std::string proc = dir_ + "/proc/" + std::to_string(pid);
    std::filesystem::create_directories(proc);
    const std::string argv[] = {"rbd-nbd", "map", "--cookie", kVolume, spec};
    std::ofstream cmdline(proc + "/cmdline", std::ios::binary);
    for (const std::string& a : argv) cmdline << a << '\0';
    cmdline.close();
    std::filesystem::create_symlink(std::filesystem::canonical(FAKE_RBD_NBD_PATH), proc + "/exe");
    std::ofstream(proc + "/status") << "Name:\trbd-nbd\nUid:\t" << ::geteuid() << "\t" << ::geteuid() << "\t0\t0\n";
    std::ofstream(dir_ + "/mountinfo").flush();
    return pid;
  }

  // kVolume as the snapshot "monday" of rbd/img, a read-only block device.
  StageRequest SnapshotRequest() {
    Behave("img@monday.map", "device=/dev/nbd3");
    StageRequest r = Request(true);
    r.capability.read_only = true;
    r.snapshot = "monday";
    return r;
  }

  // The attaches so far: each of `spec`, read-only.
  int AttachesOf(const std::string& spec) {
    int attaches = 0;
    for (const std::string& line : ArgvLog()) {
      if (line.find(" attach ") == std::string::npos) continue;
      ++attaches;
      EXPECT_TRUE(line.ends_with(" " + spec)) << line;
      EXPECT_NE(line.find(" --read-only "), std::string::npos) << line;
    }
    return attaches;
  }

  HealSummary Heal() {
    HealOptions options;
    options.evidence.proc_root = dir_ + "/proc";
    options.evidence.sysfs_root = dir_ + "/sys";
    options.evidence.rbd_nbd_path = FAKE_RBD_NBD_PATH;
    options.mountinfo_path = dir_ + "/mountinfo";
    options.attach_wait_ms = 2000;
    std::optional<HealSummary> got;
    HealVolumes(*node_, options, [&](HealSummary s) { got = s; });
    EXPECT_TRUE(RunUntil([&] { return got.has_value(); }));
    return got.value_or(HealSummary{});
  }

  void ExpectAdoptedAndJournaled() {
    auto snap = sup().Snapshot(kVolume);
    ASSERT_TRUE(snap.has_value());
    EXPECT_EQ(snap->state, MappingState::kConnected);
    ASSERT_NE(Record(), nullptr);
    EXPECT_EQ(Record()->state, VolumeState::kStaged);
    EXPECT_EQ(JournalFiles(), 1u);
  }

  void UnpublishAndUnstage() {
    UnpublishRequest u{kVolume, Target()};
    EXPECT_TRUE(Run([&](auto done) { UnpublishVolume(*node_, u, Lock(), done); }).ok());
    ExpectUnstaged();
    ExpectNothingLeft();
  }
};

TEST_F(VolumeHealerTest, AdoptsJournalsAndRemountsEverything) {
  StageAndPublish();
  Restart();
  HealSummary s = Heal();
  EXPECT_EQ(s.adopted, 1u);
  EXPECT_EQ(s.remounted, 2u);
  EXPECT_EQ(s.failures, 0u);
  ExpectAdoptedAndJournaled();
  EXPECT_EQ(host_.mounted, (std::set<std::string>{MountPoint(), Target()}));
  UnpublishAndUnstage();
}

struct HealFault {
  std::string name;
  size_t remounted;  // of the staging mount and the target
  std::function<void(NodeTest&)> inject;
};

void PrintTo(const HealFault& f, std::ostream* os) { *os << f.name; }

class HealFaultTest : public VolumeHealerTest, public ::testing::WithParamInterface<HealFault> {};

std::vector<HealFault> HealFaults() {
  // Writes so far: the stage's two, the publish's one; the heal's pid is the fourth.
  return {
      {"JournalPid", 2, [](NodeTest& t) { t.FailJournalWrite(4); }},
      {"ReadMounts", 0, [](NodeTest& t) { t.RemoveMountTable(); }},
      {"RemountStaging", 1, [](NodeTest& t) { t.FailHostStep("Mount"); }},
      {"RemountTarget", 1, [](NodeTest& t) { t.FailHostStep("BindMount"); }},
  };
}

TEST_P(HealFaultTest, CountsTheFailureAndKeepsTheVolume) {
  StageAndPublish();
  Restart();
  GetParam().inject(*this);
  HealSummary s = Heal();
  EXPECT_EQ(s.adopted, 1u);
  EXPECT_EQ(s.failures, 1u);
  EXPECT_EQ(s.remounted, GetParam().remounted);
  ExpectAdoptedAndJournaled();
  UnpublishAndUnstage();
}

INSTANTIATE_TEST_SUITE_P(EveryStep, HealFaultTest, ::testing::ValuesIn(HealFaults()),
                         [](const auto& info) { return info.param.name; });

// The journal read back after the restart says which snapshot: its server
// is adopted, and once killed re-attached to the same snapshot.
TEST_F(VolumeHealerTest, ASnapshotIsAdoptedAndReattachedAsTheSnapshotNeverTheHead) {
  ASSERT_TRUE(Stage(SnapshotRequest()).ok());
  int pid = Restart("rbd/img@monday");
  EXPECT_TRUE(ReloadJournal().empty());
  ASSERT_NE(Record(), nullptr);
  EXPECT_EQ(Record()->snap, "monday");
  HealSummary s = Heal();
  EXPECT_EQ(s.adopted, 1u);
  EXPECT_EQ(s.failures, 0u);
  ASSERT_EQ(Snap(kVolume).pid, pid);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts(kVolume, 1); }));
  EXPECT_EQ(AttachesOf("rbd/img@monday"), 1);
  EXPECT_TRUE(breaker_.breaks.empty());
  ExpectUnstaged();
  ExpectNothingLeft();
}

// The kernel no longer holds the device: the volume is marked Expired, not
// forgotten, and an unstage still unmaps it.
TEST_F(VolumeHealerTest, ExpiredVolumeStaysJournaledAndUnstages) {
  ASSERT_TRUE(Stage(Request()).ok());
  Restart();
  std::filesystem::remove(dir_ + "/sys/block/nbd3/backend");
  HealSummary s = Heal();
  EXPECT_EQ(s.expired, 1u);
  EXPECT_EQ(s.failures, 0u);
  auto snap = sup().Snapshot(kVolume);
  ASSERT_TRUE(snap.has_value());
  EXPECT_EQ(snap->state, MappingState::kExpired);
  ASSERT_NE(Record(), nullptr);
  EXPECT_EQ(Record()->state, VolumeState::kStaged);
  ExpectUnstaged();
  ExpectNothingLeft();
}

// A stage whose undo stopped leaves a staging record: the heal leaves it
// alone (kubelet retries the stage), and unstage finishes it.
TEST_F(VolumeHealerTest, StagingRecordIsLeftForTheRetry) {
  FailHostStep("Mount");
  FailUnmap();
  EXPECT_FALSE(Stage(Request()).ok());
  Restart();
  ClearFaults();
  HealSummary s = Heal();
  EXPECT_EQ(s.skipped, 1u);
  ASSERT_NE(Record(), nullptr);
  EXPECT_EQ(Record()->state, VolumeState::kStaging);
  ASSERT_TRUE(Stage(Request()).ok());
  ExpectUnstaged();
  ExpectNothingLeft();
}

}  // namespace
}  // namespace nbdk::testing
