#include "csi/map_options.h"

#include <gtest/gtest.h>

namespace nbdk {
namespace {

using Args = std::vector<std::string>;

TEST(NbdOptionSectionTest, PicksTheNbdSection) {
  EXPECT_EQ(*NbdOptionSection("krbd:lock_on_read,queue_depth=1024;nbd:try-netlink"), "try-netlink");
  EXPECT_EQ(*NbdOptionSection(" NBD : exclusive ; krbd:x"), "exclusive");
  // Values may contain ':'; only the first one separates the mounter.
  EXPECT_EQ(*NbdOptionSection("nbd:quiesce-hook=/a:b"), "quiesce-hook=/a:b");
}

TEST(NbdOptionSectionTest, BareSectionIsKrbdAndEmptyIsNothing) {
  EXPECT_EQ(*NbdOptionSection("lock_on_read"), "");
  EXPECT_EQ(*NbdOptionSection(""), "");
  EXPECT_EQ(*NbdOptionSection(";;"), "");
}

TEST(NbdOptionSectionTest, LastNbdSectionWinsAsInCephCsi) {
  EXPECT_EQ(*NbdOptionSection("nbd:a;nbd:b"), "b");
}

TEST(NbdOptionSectionTest, RejectsUnknownMounter) {
  auto r = NbdOptionSection("rbd:exclusive");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("unknown mounter type 'rbd'"), std::string::npos);
}

TEST(NbdOptionArgsTest, OneArgumentPerOption) {
  EXPECT_EQ(*NbdOptionArgs("try-netlink,exclusive,quiesce-hook=/usr/bin/hook"),
            (Args{"--try-netlink", "--exclusive", "--quiesce-hook=/usr/bin/hook"}));
  EXPECT_EQ(*NbdOptionArgs("--read-only, notrim ,"), (Args{"--read-only", "--notrim"}));
  EXPECT_EQ(*NbdOptionArgs(""), Args{});
  EXPECT_EQ(*NbdOptionArgs("io-timeout=0,reattach-timeout=600"), (Args{"--io-timeout=0", "--reattach-timeout=600"}));
  EXPECT_EQ(*NbdOptionArgs("timeout=00"), Args{"--timeout=00"});
}

TEST(NbdOptionArgsTest, RejectsNonZeroIoTimeoutAndSaysWhy) {
  for (const char* bad : {"io-timeout=30", "--io-timeout=1", "timeout=5", "io-timeout", "io-timeout=x"}) {
    auto r = NbdOptionArgs(std::string("exclusive,") + bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("only 0 is allowed"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("EIO"), std::string::npos) << r.status().message();
  }
}

TEST(NbdOptionArgsTest, RejectsBadNamesAndValues) {
  for (const char* bad : {"-x", "a b", "$(reboot)", "=1", "opt;rm", "opt=a b", "opt=a\nb", "opt=\t", "io-timeout="}) {
    auto r = NbdOptionArgs(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace nbdk
