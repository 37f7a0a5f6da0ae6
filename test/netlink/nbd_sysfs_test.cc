#include "netlink/nbd_sysfs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace nbdk {
namespace {

namespace fs = std::filesystem;

// A fake sysfs root: <tmp>/block/nbdX/{backend,pid}.
class NbdSysfsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("nbdk_sysfs_test." + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "block");
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(int index, const char* name, const std::string& content) {
    fs::path dir = root_ / "block" / ("nbd" + std::to_string(index));
    fs::create_directories(dir);
    std::ofstream(dir / name) << content;
  }
  std::string root() const { return root_.string(); }

  fs::path root_;
};

TEST_F(NbdSysfsTest, FindsEveryDeviceCarryingACookie) {
  Write(12, "backend", "vol-a\n");
  Write(3, "backend", "vol-a\n");
  Write(4, "backend", "vol-b\n");
  fs::create_directories(root_ / "block" / "nbd5");  // not connected: no backend
  fs::create_directories(root_ / "block" / "sda");
  auto found = NbdDevicesWithCookie("vol-a", root());
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(*found, (std::vector<int>{3, 12}));
  EXPECT_TRUE(NbdDevicesWithCookie("vol-c", root())->empty());
  EXPECT_EQ(NbdDevicesWithCookie("vol-a", root() + "/none").status().code(), Code::kIoError);
}

TEST_F(NbdSysfsTest, ReadsTheCookieWithoutTheNewline) {
  Write(3, "backend", "5f0c1b2e-9a7d-4c1e-8f3a-2b6d7e8f9a01\n");
  auto cookie = ReadNbdBackendCookie(3, root());
  ASSERT_TRUE(cookie.ok()) << cookie.status().ToString();
  EXPECT_EQ(*cookie, "5f0c1b2e-9a7d-4c1e-8f3a-2b6d7e8f9a01");
}

TEST_F(NbdSysfsTest, MissingOrEmptyBackendIsNotFound) {
  auto absent = ReadNbdBackendCookie(4, root());
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().code(), Code::kNotFound);
  EXPECT_NE(absent.status().message().find("/block/nbd4/backend"), std::string::npos)
      << absent.status().ToString();

  Write(5, "backend", "\n");
  auto empty = ReadNbdBackendCookie(5, root());
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), Code::kNotFound);
}

TEST(NbdSysfsFileTest, NamesTheFileUnderTheDevicesDirectory) {
  EXPECT_EQ(NbdSysfsFile(7, kSysfsRoot, "queue/io_timeout"), "/sys/block/nbd7/queue/io_timeout");
  EXPECT_EQ(NbdSysfsFile(0, "/tmp/x", "backend"), "/tmp/x/block/nbd0/backend");
}

TEST_F(NbdSysfsTest, ListsHoldersSortedAndNoneForAMissingDevice) {
  fs::create_directories(root_ / "block" / "nbd2" / "holders" / "md0");
  fs::create_directories(root_ / "block" / "nbd2" / "holders" / "dm-1");
  fs::create_directories(root_ / "block" / "nbd3" / "holders");
  auto held = ReadNbdHolders(2, root());
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  EXPECT_EQ(*held, (std::vector<std::string>{"dm-1", "md0"}));
  EXPECT_TRUE(ReadNbdHolders(3, root())->empty());
  EXPECT_TRUE(ReadNbdHolders(9, root())->empty());
  EXPECT_EQ(ReadNbdHolders(-1, root()).status().code(), Code::kInvalidArgument);
}

TEST_F(NbdSysfsTest, NegativeIndexIsInvalidArgument) {
  EXPECT_EQ(ReadNbdBackendCookie(-1, root()).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(NbdPidFileExists(-2, root()).status().code(), Code::kInvalidArgument);
}

TEST_F(NbdSysfsTest, PidFileExistence) {
  Write(0, "pid", "1234\n");
  auto present = NbdPidFileExists(0, root());
  ASSERT_TRUE(present.ok()) << present.status().ToString();
  EXPECT_TRUE(*present);
  auto absent = NbdPidFileExists(1, root());
  ASSERT_TRUE(absent.ok()) << absent.status().ToString();
  EXPECT_FALSE(*absent);
}

}  // namespace
}  // namespace nbdk
