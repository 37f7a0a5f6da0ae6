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

TEST_F(NbdSysfsTest, ADeviceIsTheVolumesOnlyWhileItCarriesItsCookie) {
  Write(3, "backend", "vol-a\n");
  Write(4, "backend", "vol-b\n");
  EXPECT_TRUE(CheckNbdBackendCookie("/dev/nbd3", "vol-a", root()).ok());
  Status other = CheckNbdBackendCookie("/dev/nbd4", "vol-a", root());
  EXPECT_EQ(other.code(), Code::kFailedPrecondition);
  EXPECT_NE(other.message().find("/dev/nbd4 carries cookie vol-b, not vol-a"), std::string::npos) << other.ToString();
  Status none = CheckNbdBackendCookie("/dev/nbd5", "vol-a", root());
  EXPECT_EQ(none.code(), Code::kFailedPrecondition);
  EXPECT_NE(none.message().find("no cookie"), std::string::npos) << none.ToString();
  EXPECT_EQ(CheckNbdBackendCookie("/dev/nbd3p1", "vol-a", root()).code(), Code::kInvalidArgument);
  Write(6, "backend", "vol-a-and-more\n");
  EXPECT_EQ(CheckNbdBackendCookie("/dev/nbd6", "vol-a", root()).code(), Code::kFailedPrecondition)
      << "a prefix is not the cookie";
}

TEST_F(NbdSysfsTest, MissingOrEmptyBackendIsNotFound) {
  auto absent = ReadNbdBackendCookie(4, root());
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().code(), Code::kNotFound);
  EXPECT_NE(absent.status().message().find("/block/nbd4/backend"), std::string::npos) << absent.status().ToString();

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

namespace nbdk {
namespace {

TEST(NbdIoCountersTest, SumsInFlightAndEveryKindOfCompletion) {
  // 17 fields (5.5+): reads 75, writes 377, discards 3, flushes 237.
  auto c =
      ParseNbdIoCounters("       0        1\n", "  75 0 2214 544 377 540 4138 10376 1 139476 11579 3 0 0 0 237 658\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->in_flight, 1u);
  EXPECT_EQ(c->completed, 75u + 377u + 3u + 237u);
  auto old = ParseNbdIoCounters("2 3", "10 0 0 0 20 0 0 0 5 0 0");
  ASSERT_TRUE(old.ok()) << "11 fields (before 4.18)";
  EXPECT_EQ(old->in_flight, 5u);
  EXPECT_EQ(old->completed, 30u);
}

TEST(NbdIoCountersTest, AnythingElseIsNamedInvalid) {
  const char* stat17 = "1 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0";
  for (const char* inflight : {"", "1", "1 2 3", "1 x", "-1 2"}) {
    auto c = ParseNbdIoCounters(inflight, stat17);
    EXPECT_EQ(c.status().code(), Code::kInvalidArgument) << inflight;
    EXPECT_NE(c.status().message().find("inflight"), std::string::npos);
  }
  for (const char* stat : {"", "1 2 3", "1 0 0 0 1 0 0 0 0 0 0 0", "1 0 0 0 1 0 0 0 0 0 z"}) {
    auto c = ParseNbdIoCounters("0 0", stat);
    EXPECT_EQ(c.status().code(), Code::kInvalidArgument) << stat;
    EXPECT_NE(c.status().message().find("stat"), std::string::npos);
  }
}

TEST_F(NbdSysfsTest, IoCountersAreReadFromTheDevicesFiles) {
  Write(4, "inflight", "0 2\n");
  Write(4, "stat", "5 0 0 0 6 0 0 0 2 0 0\n");
  auto c = ReadNbdIoCounters(4, root());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->in_flight, 2u);
  EXPECT_EQ(c->completed, 11u);
  EXPECT_EQ(ReadNbdIoCounters(5, root()).status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace nbdk
