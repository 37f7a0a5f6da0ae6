#include "base/text_rules.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>

namespace nbdk {
namespace {

// The one definition agrees byte for byte with the <cctype> rule the rooms
// each wrote before (the daemon never leaves the "C" locale).
TEST(TextRulesTest, SpaceOrControlIsCtypesRuleInTheCLocale) {
  for (int byte = 0; byte < 256; ++byte) {
    const std::string one(1, static_cast<char>(byte));
    EXPECT_EQ(HasSpaceOrControl(one), std::isspace(byte) != 0 || std::iscntrl(byte) != 0) << byte;
  }
}

TEST(TextRulesTest, AnyOffendingByteCounts) {
  EXPECT_FALSE(HasSpaceOrControl(""));
  EXPECT_FALSE(HasSpaceOrControl("pvc-1b7e_\xc3\xa9"));
  EXPECT_TRUE(HasSpaceOrControl("pvc-1b7e\n"));
  EXPECT_TRUE(HasSpaceOrControl(std::string("pvc\0x", 5)));
  static_assert(HasSpaceOrControl("a b") && !HasSpaceOrControl("ab"));
}

}  // namespace
}  // namespace nbdk
