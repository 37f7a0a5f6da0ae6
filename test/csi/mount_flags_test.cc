#include "csi/mount_flags.h"

#include <gtest/gtest.h>

namespace nbdk {
namespace {

using Flags = std::vector<std::string>;
const std::string kField = "volume_capability.mount.mount_flags";

TEST(MountFlagsTest, AllowedFlagsAreSplitIntoSingleOptions) {
  auto r = ParseMountFlags({"noatime,discard", "commit=30", "errors=remount-ro"}, "ext4", kField);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (Flags{"noatime", "discard", "commit=30", "errors=remount-ro"}));
  EXPECT_TRUE(ParseMountFlags({"allocsize=64k,inode64,largeio"}, "xfs", kField).ok());
}

// Kubernetes adds the pod's SELinux context; its category list holds a comma.
TEST(MountFlagsTest, SelinuxContextWithCategoriesStaysOneOption) {
  auto r = ParseMountFlags({"context=\"system_u:object_r:container_file_t:s0:c10,c20\",noatime"}, "ext4", kField);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (Flags{"context=\"system_u:object_r:container_file_t:s0:c10,c20\"", "noatime"}));
  EXPECT_FALSE(ParseMountFlags({"context=\"a:b"}, "ext4", kField).ok()) << "unbalanced quote";
}

TEST(MountFlagsTest, PathsCrashSafetyAndPrivilegeOptionsAreRefused) {
  for (const char* bad : {"journal_path=/dev/sda", "logdev=/dev/sda", "rtdev=/dev/sdb", "nobarrier", "barrier=0",
                          "errors=panic", "suid", "dev", "rw", "loop", "offset=0", "norecovery", "uid=0",
                          "x-mount.mkdir", "data=", "commit=-1", "commit=1e9", "context=$(id)", "remount"}) {
    auto r = ParseMountFlags({bad}, "ext4", kField);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << bad;
    EXPECT_EQ(r.status().message().find(bad), std::string::npos) << "flags MAY be sensitive: " << r.status().message();
    EXPECT_NE(r.status().message().find("mount_flags[0]"), std::string::npos) << r.status().message();
  }
}

TEST(MountFlagsTest, OptionsOfTheOtherFilesystemAreRefused) {
  EXPECT_FALSE(ParseMountFlags({"allocsize=64k"}, "ext4", kField).ok());
  EXPECT_FALSE(ParseMountFlags({"data=journal"}, "xfs", kField).ok());
}

TEST(MountFlagsTest, WhitespaceAndOversizeAreRefused) {
  EXPECT_FALSE(ParseMountFlags({"noatime discard"}, "ext4", kField).ok());
  EXPECT_FALSE(ParseMountFlags({"noatime\n"}, "ext4", kField).ok());
  auto r = ParseMountFlags(Flags(600, "noatime"), "ext4", kField);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("4 KiB"), std::string::npos);
}

}  // namespace
}  // namespace nbdk
