#include "csi/mkfs_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nbdk {
namespace {

using Args = std::vector<std::string>;

void ExpectRefused(std::string_view fs, std::string_view text, std::string_view mentions) {
  auto r = MkfsOptions(fs, text);
  ASSERT_FALSE(r.ok()) << fs << " " << text;
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(r.status().message().starts_with("mkfsOptions: ")) << r.status().message();
  EXPECT_NE(r.status().message().find(mentions), std::string::npos) << r.status().message();
}

// As ceph-csi's Node: no mkfsOptions (or an empty one) is its defaults.
TEST(MkfsOptions, AbsentIsCephCsisDefaults) {
  EXPECT_EQ(*MkfsOptions("ext4", ""), (Args{"-m0", "-Enodiscard,lazy_itable_init=1,lazy_journal_init=1"}));
  EXPECT_EQ(*MkfsOptions("xfs", ""), (Args{"-K"}));
  EXPECT_EQ(*MkfsOptions("ext4", ""), DefaultMkfsOptions("ext4"));
}

// mkfsOptions replaces the defaults; each option and its value become
// argv elements of their own.
TEST(MkfsOptions, GivenOnesReplaceTheDefaultsAsSeparateArguments) {
  EXPECT_EQ(*MkfsOptions("ext4", "-m0 -E lazy_itable_init=0,nodiscard -O ^metadata_csum,64bit -b 4096 -L data"),
            (Args{"-m", "0", "-E", "lazy_itable_init=0,nodiscard", "-O", "^metadata_csum,64bit", "-b", "4096", "-L",
                  "data"}));
  EXPECT_EQ(
      *MkfsOptions("ext4", "  -j   -i 8192 -T largefile -e remount-ro -m 0.5 -E root_owner=1000:1000"),
      (Args{"-j", "-i", "8192", "-T", "largefile", "-e", "remount-ro", "-m", "0.5", "-E", "root_owner=1000:1000"}));
  EXPECT_EQ(
      *MkfsOptions("xfs", "-K -m reflink=0,crc=1 -d su=64k,sw=4 -i size=512 -n ftype=1 -L logs"),
      (Args{"-K", "-m", "reflink=0,crc=1", "-d", "su=64k,sw=4", "-i", "size=512", "-n", "ftype=1", "-L", "logs"}));
}

// What names a host file or device, changes what is made, or is not listed
// is refused by name; so is a value outside its rule.
TEST(MkfsOptions, WhatIsNotAllowedIsRefusedByName) {
  ExpectRefused("ext4", "-d /etc", "'-d' is not an option nbdkeeper allows for ext4");
  ExpectRefused("ext4", "-z /tmp/undo", "'-z' is not an option");
  ExpectRefused("ext4", "-t ext2", "'-t' is not an option");
  ExpectRefused("ext4", "-n", "'-n' is not an option");
  ExpectRefused("ext4", "-S", "'-S' is not an option");
  ExpectRefused("ext4", "-l badblocks", "'-l' is not an option");
  ExpectRefused("ext4", "-E offset=4096", "-E 'offset=4096' is not a sub-option nbdkeeper allows");
  ExpectRefused("ext4", "-E nodiscard,", "-E '' is not a sub-option");
  ExpectRefused("ext4", "-E lazy_itable_init=2", "-E 'lazy_itable_init=2' has a value nbdkeeper does not allow");
  ExpectRefused("ext4", "-E nodiscard=1", "has a value");
  ExpectRefused("ext4", "-O ^has_journal,journal_dev", "'journal_dev' is not a feature nbdkeeper allows");
  ExpectRefused("ext4", "-m", "-m needs a value");
  ExpectRefused("ext4", "-m -5", "-m '-5' is not a value nbdkeeper allows");
  ExpectRefused("ext4", "-b 4k;rm", "is not a value");
  ExpectRefused("ext4", "-jK", "'-jK' takes no value");
  ExpectRefused("ext4", "-L has/slash", "is not a value");
  ExpectRefused("ext4", "-b 99999999999999999999", "is not a value");
  ExpectRefused("ext4", "/dev/sda", "'/dev/sda' is not an option");
  ExpectRefused("ext4", "-K", "'-K' is not an option nbdkeeper allows for ext4");
  ExpectRefused("xfs", "-p /etc/protofile", "'-p' is not an option nbdkeeper allows for xfs");
  ExpectRefused("xfs", "-l logdev=/dev/sdb", "-l 'logdev=/dev/sdb' is not a sub-option");
  ExpectRefused("xfs", "-r rtdev=/dev/sdb", "'-r' is not an option");
  ExpectRefused("xfs", "-d file=1,name=/x", "-d 'file=1' is not a sub-option");
  ExpectRefused("xfs", "-f", "'-f' is not an option");
  ExpectRefused("xfs", "-N", "'-N' is not an option");
  ExpectRefused("xfs", "-m reflink=2", "-m 'reflink=2' has a value");
  ExpectRefused("xfs", "-m reflink", "-m 'reflink' has a value");
  ExpectRefused("xfs", "   ", "only spaces");
  ExpectRefused("btrfs", "-K", "no options for filesystem type 'btrfs'");
}

TEST(MkfsOptions, HostileTextIsQuotedBounded) {
  const std::string huge = "-\x1b[2J\n" + std::string(60000, 'a');
  auto r = MkfsOptions("ext4", huge);
  ASSERT_FALSE(r.ok());
  EXPECT_LT(r.status().message().size(), 400u);
  for (char c : r.status().message()) ASSERT_GE(static_cast<unsigned char>(c), 0x20);
}

}  // namespace
}  // namespace nbdk
