// HealEvidence over a fake /proc and a fake sysfs tree.
#include "csi/heal/heal_evidence.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>

#include "base/uv_handle.h"
#include "test/host/fake_proc.h"

namespace nbdk {
namespace {

class HealEvidenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nbdk-heal-evidence-XXXXXX";
    dir_ = mkdtemp(tmpl);
    options_.proc_root = dir_ + "/proc";
    options_.sysfs_root = dir_ + "/sys";
    std::filesystem::create_directories(options_.proc_root + "/self");
    // The configured rbd-nbd, and another program also named rbd-nbd.
    for (const char* bin : {"/bin/rbd-nbd", "/elsewhere/rbd-nbd"}) {
      std::filesystem::create_directories(std::filesystem::path(dir_ + bin).parent_path());
      std::ofstream(dir_ + bin) << "#!/bin/sh\n";
      std::filesystem::permissions(dir_ + bin, std::filesystem::perms::owner_all);
    }
    rbd_nbd_ = std::filesystem::canonical(dir_ + "/bin/rbd-nbd");
    options_.rbd_nbd_path = dir_ + "/bin/rbd-nbd";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A process as /proc shows it; by default one the daemon could have
  // started (the configured binary, the daemon's uid).
  void Process(int pid, const std::string& cmdline, std::string exe = "", int64_t uid = -1) {
    WriteFakeProcess(options_.proc_root, pid, cmdline, exe.empty() ? rbd_nbd_ : exe,
                     uid < 0 ? options_.server_uid : uid);
  }
  // The pid the kernel recorded when the device was connected.
  void ConnectedBy(int index, int pid) {
    std::ofstream(options_.sysfs_root + "/block/nbd" + std::to_string(index) + "/pid") << pid << "\n";
  }
  void Backend(int index, const std::string& cookie) {
    std::string d = options_.sysfs_root + "/block/nbd" + std::to_string(index);
    std::filesystem::create_directories(d);
    std::ofstream(d + "/backend") << cookie << "\n";
  }
  static VolumeRecord Record(const std::string& id, const std::string& device) {
    VolumeRecord r;
    r.volume_id = id;
    r.pool = "rbd";
    r.image = id;
    r.nbd_device = device;
    r.cookie = id;
    r.boot_id = "boot-1";
    r.state = VolumeState::kStaged;
    return r;
  }

  std::string dir_;
  std::string rbd_nbd_;
  HealEvidenceOptions options_;
};

TEST_F(HealEvidenceTest, DeviceViewReadsTheBackendCookie) {
  Backend(3, "vol-a");
  auto view = ReadNbdDeviceView("/dev/nbd3", options_.sysfs_root);
  ASSERT_TRUE(view.ok());
  EXPECT_TRUE(view->configured);
  EXPECT_EQ(view->backend_cookie, "vol-a");
  view = ReadNbdDeviceView("/dev/nbd4", options_.sysfs_root);
  ASSERT_TRUE(view.ok());
  EXPECT_FALSE(view->configured);
  EXPECT_EQ(ReadNbdDeviceView("/dev/sda", options_.sysfs_root).status().code(), Code::kInvalidArgument);
}

TEST_F(HealEvidenceTest, GatherPlansEachRecordFromTheSameScan) {
  using namespace std::string_literals;
  Backend(3, "vol-a");
  Backend(5, "someone-else");
  Process(40, "/usr/bin/rbd-nbd\0map\0-f\0--cookie\0vol-a\0rbd/vol-a\0"s);
  ConnectedBy(3, 40);
  VolumeRecord stale = Record("vol-s", "/dev/nbd9");
  stale.boot_id = "boot-0";
  VolumeRecord staging = Record("vol-t", "/dev/nbd8");
  staging.state = VolumeState::kStaging;
  auto plans = GatherHealEvidence({Record("vol-a", "/dev/nbd3"), Record("vol-b", "/dev/nbd5"), stale, staging},
                                  "boot-1", options_)
                   .plans;
  ASSERT_EQ(plans.size(), 4u);
  EXPECT_EQ(plans[0].action, HealAction::kAdopt);
  EXPECT_EQ(plans[0].pid, 40);
  EXPECT_EQ(plans[1].action, HealAction::kExpired) << plans[1].reason;
  EXPECT_EQ(plans[2].action, HealAction::kStaleBoot);
  EXPECT_EQ(plans[3].action, HealAction::kSkip);
}

TEST_F(HealEvidenceTest, OnlyAProcessWithOurIdentityIsAdopted) {
  using namespace std::string_literals;
  Backend(3, "vol-a");
  ConnectedBy(3, 40);  // the map, since gone
  std::string map_argv = "rbd-nbd\0map\0-f\0--cookie\0vol-a\0rbd/vol-a\0"s;
  Process(41, map_argv, dir_ + "/elsewhere/rbd-nbd");
  Process(42, map_argv, "", options_.server_uid + 1);
  Process(43, map_argv);  // not the pid that connected nbd3
  auto plans = GatherHealEvidence({Record("vol-a", "/dev/nbd3")}, "boot-1", options_).plans;
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_NE(plans[0].action, HealAction::kAdopt) << plans[0].reason;
  EXPECT_EQ(plans[0].pid, 0);
  const std::string& why = plans[0].reason;
  EXPECT_NE(why.find("pid 41 runs '" + dir_ + "/elsewhere/rbd-nbd', not " + rbd_nbd_), std::string::npos) << why;
  EXPECT_NE(why.find("pid 42 runs as uid"), std::string::npos) << why;
  EXPECT_NE(why.find("pid 43 is a map but /dev/nbd3 was connected by pid 40"), std::string::npos) << why;
}

TEST_F(HealEvidenceTest, TheJournaledAttachIsAdoptedThoughSysfsNamesTheMap) {
  using namespace std::string_literals;
  Backend(6, "vol-c");
  ConnectedBy(6, 40);  // kept from the original map after the re-attach
  Process(50, "rbd-nbd\0attach\0-f\0--device\0/dev/nbd6\0--cookie\0vol-c\0rbd/vol-c\0"s);
  VolumeRecord r = Record("vol-c", "/dev/nbd6");
  r.rbd_nbd_pid = 50;
  auto plans = GatherHealEvidence({r}, "boot-1", options_).plans;
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].action, HealAction::kAdopt) << plans[0].reason;
  EXPECT_EQ(plans[0].pid, 50);
}

// A read that fails at once makes the volume Expired; a read still blocked
// at the deadline (a FIFO without a writer blocks its open as a device
// waiting for an attach blocks its read) leaves it a re-attach, and is left
// to finish on its own thread.
TEST_F(HealEvidenceTest, ProbesEachReattachOnItsOwnThreadUntilTheDeadline) {
  std::string fifo = dir_ + "/waiting";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::vector<VolumeRecord> records = {Record("vol-a", dir_ + "/gone"), Record("vol-b", fifo), Record("vol-c", "x")};
  records[2].state = VolumeState::kStaging;
  HealEvidence evidence;
  for (const VolumeRecord& r : records) {
    evidence.views.push_back(NbdDeviceView{true, r.cookie, 0, DeviceIo::kNotProbed});
    evidence.plans.push_back(PlanHeal(r, "boot-1", evidence.views.back(), {}, {}));
  }
  ASSERT_EQ(evidence.plans[0].action, HealAction::kReattach);
  ASSERT_EQ(evidence.plans[1].action, HealAction::kReattach);
  ASSERT_EQ(evidence.plans[2].action, HealAction::kSkip);

  EventLoop loop;
  std::optional<std::vector<HealPlan>> plans;
  uint64_t started = loop.NowMs();
  ProbeReattaches(loop, records, "boot-1", evidence, 300, [&](std::vector<HealPlan> p) {
    plans = std::move(p);
    loop.Stop();
  });
  Timer limit(loop);
  limit.Start(5000, 0, [&] { loop.Stop(); });
  loop.Run();
  ASSERT_TRUE(plans.has_value());
  EXPECT_GE(loop.NowMs() - started, 300u);
  EXPECT_EQ((*plans)[0].action, HealAction::kExpired) << (*plans)[0].reason;
  EXPECT_EQ((*plans)[1].action, HealAction::kReattach) << (*plans)[1].reason;
  EXPECT_EQ((*plans)[2].action, HealAction::kSkip);

  // Lets the blocked read go; its late answer changes nothing.
  int fd = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ::close(fd);
}

TEST(ResolveExecutableTest, FindsABareNameInPathAndResolvesLinks) {
  auto sh = ResolveExecutable("sh");
  ASSERT_TRUE(sh.ok()) << sh.status().ToString();
  EXPECT_EQ(sh->front(), '/');
  EXPECT_EQ(*sh, std::filesystem::canonical(*sh).string());
  EXPECT_EQ(ResolveExecutable("no-such-program-here").status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace nbdk
