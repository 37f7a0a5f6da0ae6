#include "host/mount_table.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace nbdk {
namespace {

TEST(MountTableTest, ParsesEntriesAndUnescapes) {
  const char* text =
      "22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
      "90 30 43:0 / /var/lib/kubelet/staging/vol\\0401 rw,relatime shared:50 - ext4 /dev/nbd0 rw\n"
      "91 30 43:0 / /mnt/pub ro,relatime - ext4 /dev/nbd0 rw\n"
      "92 30 43:0 / /mnt/pub rw,relatime - ext4 /dev/nbd1 rw\n";
  auto t = ParseMountInfo(text);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->size(), 4u);
  EXPECT_EQ((*t)[1].mount_point, "/var/lib/kubelet/staging/vol 1");
  EXPECT_EQ((*t)[1].source, "/dev/nbd0");
  EXPECT_EQ((*t)[1].fs_type, "ext4");
  EXPECT_TRUE((*t)[2].read_only());
  EXPECT_FALSE((*t)[1].read_only());
  // The top-most mount wins.
  EXPECT_EQ(FindMount(*t, "/mnt/pub")->source, "/dev/nbd1");
  EXPECT_EQ(FindMount(*t, "/nowhere"), nullptr);
}

TEST(MountTableTest, MalformedLineIsNamed) {
  auto t = ParseMountInfo("22 1 0:21 / /proc rw - proc proc rw\n23 1 0:22 / /sys rw\n");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Code::kCorruption);
  EXPECT_NE(t.status().message().find("line 2"), std::string::npos);
}

TEST(MountTableTest, MalformedLastLineWithoutNewlineIsNamed) {
  auto t = ParseMountInfo("22 1 0:21 / /proc rw - proc proc rw\n\n23 1 0:22 / /sys");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Code::kCorruption);
  EXPECT_NE(t.status().message().find("line 3"), std::string::npos) << t.status().ToString();
}

TEST(MountTableTest, ALineWithANulByteIsMalformed) {
  using namespace std::string_literals;
  auto t = ParseMountInfo("22 1 0:21 / /pr\0oc rw - proc proc rw\n23 1 0:22 / /sys rw - sysfs sysfs rw\n"s);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Code::kCorruption);
  EXPECT_NE(t.status().message().find("line 1"), std::string::npos) << t.status().ToString();
}

TEST(MountTableTest, FstabTextIsNotMountinfo) {
  auto t = ParseMountInfo("/dev/sda1 / ext4 rw 0 1\n");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Code::kCorruption);
  EXPECT_NE(t.status().message().find("not in the mountinfo format"), std::string::npos) << t.status().ToString();
}

TEST(MountTableTest, EmptyTextIsAnEmptyTable) {
  auto t = ParseMountInfo("");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->empty());
}

TEST(MountTableTest, ReadsAFileWithEscapesAndABindRoot) {
  std::string path = ::testing::TempDir() + "/nbdk_mount_table_test.mountinfo";
  std::ofstream(path) << "22 1 0:21 / / rw - ext4 /dev/sda1 rw\n"
                         "40 22 0:5 /nbd3 /staging/a\\134b\\011c ro,nosuid shared:2 - devtmpfs udev rw\n";
  auto t = ReadMountTable(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->size(), 2u);
  EXPECT_EQ((*t)[1].root, "/nbd3");
  EXPECT_EQ((*t)[1].mount_point, "/staging/a\\b\tc");
  EXPECT_EQ((*t)[1].fs_type, "devtmpfs");
  EXPECT_EQ((*t)[1].source, "udev");
  EXPECT_EQ((*t)[1].options, "ro,nosuid");
  EXPECT_TRUE((*t)[1].read_only());
}

TEST(MountTableTest, MissingFileNamesIt) {
  auto t = ReadMountTable(::testing::TempDir() + "/no-such-mountinfo");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("no-such-mountinfo"), std::string::npos) << t.status().ToString();
}

TEST(MountTableTest, ReadsThisProcess) {
  auto t = ReadMountTable();
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_NE(FindMount(*t, "/"), nullptr);
}

}  // namespace
}  // namespace nbdk
