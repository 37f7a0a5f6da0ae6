// Who uses a device (host/device_users.h) over a fake mountinfo, sysfs and
// /proc.
#include "host/device_users.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace nbdk {
namespace {

namespace fs = std::filesystem;

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
