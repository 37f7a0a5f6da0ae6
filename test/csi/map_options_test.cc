#include "csi/map_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

TEST(NbdOptionSectionTest, LastNbdSectionWinsAsInCephCsi) { EXPECT_EQ(*NbdOptionSection("nbd:a;nbd:b"), "b"); }

TEST(NbdOptionSectionTest, RejectsUnknownMounter) {
  auto r = NbdOptionSection("rbd:exclusive");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("unknown mounter type 'rbd'"), std::string::npos);
}

TEST(MapOptionArgumentsTest, TheNbdSectionThroughTheAllowList) {
  auto args = MapOptionArguments("krbd:lock_on_read;nbd:try-netlink, io_timeout=0");
  ASSERT_TRUE(args.ok()) << args.status().ToString();
  EXPECT_EQ(*args, (std::vector<std::string>{"--try-netlink", "--io-timeout=0"}));
  EXPECT_TRUE(MapOptionArguments("krbd:lock_on_read")->empty());
  EXPECT_NE(MapOptionArguments("rbd:x").status().message().find("unknown mounter type 'rbd'"), std::string::npos);
  EXPECT_NE(MapOptionArguments("nbd:log-file=/x").status().message().find("map option 'log-file' is not allowed"),
            std::string::npos);
}

TEST(UnmapOptionsCsvTest, ThePlainNbdOptionList) {
  EXPECT_EQ(*UnmapOptionsCsv("krbd:force;nbd: force,timeout=5 "), "force,timeout=5");
  EXPECT_EQ(*UnmapOptionsCsv("krbd:force"), "");
  EXPECT_TRUE(UnmapOptionsCsv("nbd:force;x/y").ok());  // "x/y" is krbd's section
  EXPECT_FALSE(UnmapOptionsCsv("nbd:--conf=/x").ok());
  EXPECT_NE(UnmapOptionsCsv("nbd:a b").status().message().find("only letters, digits"), std::string::npos);
  EXPECT_NE(UnmapOptionsCsv("rbd:x").status().message().find("unknown mounter type 'rbd'"), std::string::npos);
}

}  // namespace
}  // namespace nbdk
