#include "base/join.h"

#include <gtest/gtest.h>

namespace nbdk {
namespace {

TEST(JoinTest, TheSeparatorGoesBetweenItems) {
  EXPECT_EQ(Join({"/mnt/a", "/mnt/b", "dm-0"}, ", "), "/mnt/a, /mnt/b, dm-0");
  EXPECT_EQ(Join({"rw"}, ","), "rw");
  EXPECT_EQ(Join({}, ","), "");
  EXPECT_EQ(Join({"", "rw", "noatime"}, ","), "rw,noatime") << "no separator after an empty prefix";
}

}  // namespace
}  // namespace nbdk
