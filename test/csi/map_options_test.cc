#include "csi/map_options.h"

#include <gtest/gtest.h>

namespace nbdk {
namespace {

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

}  // namespace
}  // namespace nbdk
