#include "csi/node/confined_path.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "csi/node/device_users.h"

namespace nbdk {
namespace {

namespace fs = std::filesystem;

class ConfinedPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::path(::testing::TempDir()) / ("confined-" + std::to_string(::getpid()));
    fs::remove_all(base_);
    root_ = (base_ / "kubelet").string();
    outside_ = (base_ / "outside").string();
    fs::create_directories(root_ + "/pods/p1");
    fs::create_directories(outside_ + "/precious");
    std::ofstream(outside_ + "/file") << "keep";
    fs::create_directory_symlink(outside_, root_ + "/pods/escape");
  }
  void TearDown() override { fs::remove_all(base_); }

  fs::path base_;
  std::string root_;
  std::string outside_;
};

TEST_F(ConfinedPathTest, PathsBeneathTheRootAreInspected) {
  EXPECT_EQ(*InspectBeneath({root_}, root_ + "/pods/p1", "target_path"), PathKind::kDirectory);
  EXPECT_EQ(*InspectBeneath({root_}, root_ + "/pods/p1/new", "target_path"), PathKind::kMissing);
  EXPECT_EQ(*InspectBeneath({root_}, root_ + "/pods/gone/new", "target_path"), PathKind::kMissing);
}

TEST_F(ConfinedPathTest, OutsideTheRootIsInvalidArgument) {
  for (const std::string& p : {outside_ + "/file", root_, root_ + "x/a", std::string("/etc/passwd")}) {
    auto r = InspectBeneath({root_}, p, "target_path");
    ASSERT_FALSE(r.ok()) << p;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << p;
    EXPECT_NE(r.status().message().find("csi_root"), std::string::npos) << r.status().message();
  }
}

TEST_F(ConfinedPathTest, SymlinksAnywhereBelowTheRootAreRefused) {
  auto through = InspectBeneath({root_}, root_ + "/pods/escape/precious", "target_path");
  ASSERT_FALSE(through.ok());
  EXPECT_EQ(through.status().code(), Code::kInvalidArgument) << through.status().ToString();
  auto leaf = InspectBeneath({root_}, root_ + "/pods/escape", "target_path");
  ASSERT_FALSE(leaf.ok());
  EXPECT_EQ(leaf.status().code(), Code::kInvalidArgument) << leaf.status().ToString();
  EXPECT_FALSE(CreateMountPointBeneath({root_}, root_ + "/pods/escape/new", false, "target_path").ok());
  EXPECT_FALSE(fs::exists(outside_ + "/new"));
  EXPECT_FALSE(RemoveCreatedMountPoint({root_}, root_ + "/pods/escape/precious", "target_path").ok());
  EXPECT_TRUE(fs::exists(outside_ + "/precious"));
}

TEST_F(ConfinedPathTest, APathIsConfinedBeneathTheRootItLiesIn) {
  fs::create_directories(outside_ + "/mnt");
  PathRoots roots = {root_, outside_ + "/mnt"};
  EXPECT_EQ(*InspectBeneath(roots, outside_ + "/mnt/data", "target_path"), PathKind::kMissing);
  EXPECT_EQ(InspectBeneath(roots, outside_ + "/precious", "target_path").status().code(), Code::kInvalidArgument);
}

TEST_F(ConfinedPathTest, CreateSaysWhetherItMadeTheMountPoint) {
  auto made = CreateMountPointBeneath({root_}, root_ + "/pods/p1/vol", false, "target_path");
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_TRUE(*made);
  EXPECT_FALSE(*CreateMountPointBeneath({root_}, root_ + "/pods/p1/vol", false, "target_path")) << "kept, not made";
  auto file = CreateMountPointBeneath({root_}, root_ + "/pods/p1/dev", true, "target_path");
  ASSERT_TRUE(file.ok());
  EXPECT_TRUE(fs::is_regular_file(root_ + "/pods/p1/dev"));
  auto wrong = CreateMountPointBeneath({root_}, root_ + "/pods/p1/vol", true, "target_path");
  EXPECT_EQ(wrong.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(CreateMountPointBeneath({root_}, root_ + "/pods/none/vol", false, "target_path").status().code(),
            Code::kFailedPrecondition);
  EXPECT_TRUE(RemoveCreatedMountPoint({root_}, root_ + "/pods/p1/vol", "target_path").ok());
  EXPECT_TRUE(RemoveCreatedMountPoint({root_}, root_ + "/pods/p1/dev", "target_path").ok());
  EXPECT_FALSE(fs::exists(root_ + "/pods/p1/vol"));
  EXPECT_TRUE(RemoveCreatedMountPoint({root_}, root_ + "/pods/p1/vol", "target_path").ok()) << "gone is fine";
}

TEST_F(ConfinedPathTest, ANonEmptyDirectoryIsNeverRemoved) {
  fs::create_directories(root_ + "/pods/p1/full");
  std::ofstream(root_ + "/pods/p1/full/data") << "x";
  EXPECT_FALSE(RemoveCreatedMountPoint({root_}, root_ + "/pods/p1/full", "target_path").ok());
  EXPECT_TRUE(fs::exists(root_ + "/pods/p1/full/data"));
}

TEST(DeviceUsersTest, FilesystemAndDeviceNodeBindMountsCount) {
  std::vector<MountEntry> table = {
      {"/", "/var/lib/kubelet/staging/v1", "ext4", "/dev/nbd3", "rw"},
      {"/", "/var/lib/kubelet/pods/p/vol", "ext4", "/dev/nbd3", "rw"},
      {"/nbd3", "/var/lib/kubelet/pods/p/dev", "devtmpfs", "udev", "rw"},
      {"/", "/mnt/other", "ext4", "/dev/nbd30", "rw"},
      {"/nbd30", "/x", "devtmpfs", "udev", "rw"},
  };
  EXPECT_EQ(MountsOfDevice(table, "/dev/nbd3"),
            (std::vector<std::string>{"/var/lib/kubelet/staging/v1", "/var/lib/kubelet/pods/p/vol",
                                      "/var/lib/kubelet/pods/p/dev"}));
  EXPECT_TRUE(MountsOfDevice(table, "/dev/nbd4").empty());
}

TEST(DeviceUsersTest, HoldersAndMountsAreFailedPrecondition) {
  std::string dir = ::testing::TempDir() + "/users-" + std::to_string(::getpid());
  fs::create_directories(dir + "/sys/block/nbd5/holders/dm-0");
  fs::create_directories(dir + "/sys/block/nbd6/holders");
  std::ofstream(dir + "/mountinfo") << "36 25 43:6 / /mnt/a rw,relatime shared:1 - ext4 /dev/nbd6 rw\n";
  Status held = CheckDeviceUnused("/dev/nbd5", dir + "/mountinfo", dir + "/sys", dir + "/proc");
  EXPECT_EQ(held.code(), Code::kFailedPrecondition);
  EXPECT_NE(held.message().find("dm-0"), std::string::npos);
  Status mounted = CheckDeviceUnused("/dev/nbd6", dir + "/mountinfo", dir + "/sys", dir + "/proc");
  EXPECT_EQ(mounted.code(), Code::kFailedPrecondition);
  EXPECT_NE(mounted.message().find("/mnt/a"), std::string::npos);
  fs::create_directories(dir + "/proc");
  if (!fs::exists("/dev/nbd7")) {
    EXPECT_TRUE(CheckDeviceUnused("/dev/nbd7", dir + "/mountinfo", dir + "/sys", dir + "/proc").ok());
  }
  fs::remove_all(dir);
}

// Unmapping a device a process has open fails that process's IO in flight
// (a VM's qemu, dd on a block volume): its pid and name are named instead.
// This daemon (its heal probe reads devices) and rbd-nbd (the device's
// server) are no openers.
TEST(DeviceUsersTest, AProcessWithTheDeviceOpenIsFailedPrecondition) {
  std::string dir = ::testing::TempDir() + "/openers-" + std::to_string(::getpid());
  fs::create_directories(dir);
  const std::string device = dir + "/nbd9";
  if (::mknod(device.c_str(), S_IFBLK | 0600, makedev(43, 288)) != 0) GTEST_SKIP() << "mknod needs root";
  auto process = [&](const std::string& pid, const std::string& comm, const std::string& fd_target) {
    fs::create_directories(dir + "/proc/" + pid + "/fd");
    std::ofstream(dir + "/proc/" + pid + "/comm") << comm << "\n";
    fs::create_symlink(fd_target, dir + "/proc/" + pid + "/fd/3");
  };
  std::ofstream(dir + "/mountinfo");
  process("4243", "rbd-nbd", device);
  process(std::to_string(::getpid()), "nbdkeeperd", device);
  process("4244", "cat", "/dev/null");
  EXPECT_TRUE(CheckDeviceUnused(device, dir + "/mountinfo", dir + "/sys", dir + "/proc").ok());
  process("4242", "dd", device);
  auto openers = DeviceOpeners(device, dir + "/proc");
  ASSERT_TRUE(openers.ok()) << openers.status().ToString();
  EXPECT_EQ(*openers, std::vector<std::string>{"pid 4242 (dd)"});
  Status open = CheckDeviceUnused(device, dir + "/mountinfo", dir + "/sys", dir + "/proc");
  EXPECT_EQ(open.code(), Code::kFailedPrecondition);
  EXPECT_NE(open.message().find("is open by pid 4242 (dd)"), std::string::npos) << open.ToString();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nbdk
