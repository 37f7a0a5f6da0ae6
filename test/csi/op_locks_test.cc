#include "csi/op_locks.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace nbdk {
namespace {

TEST(OpLocks, OneHolderPerKeyUntilReleased) {
  OpLocks locks;
  {
    auto first = locks.Lock("volume name pvc-1");
    ASSERT_TRUE(first.ok());
    auto second = locks.Lock("volume name pvc-1");
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().code(), Code::kAborted);
    EXPECT_TRUE(locks.Lock("volume name pvc-2").ok());
    OpLocks::Guard moved(std::move(*first));
    EXPECT_FALSE(locks.Lock("volume name pvc-1").ok());
  }
  EXPECT_TRUE(locks.Lock("volume name pvc-1").ok());
}

TEST(OpLocks, SeveralKeysAllOrNone) {
  OpLocks locks;
  auto source = locks.Lock("volume v1");
  ASSERT_TRUE(source.ok());
  auto both = locks.Lock(std::vector<std::string>{"snapshot name s1", "volume v1"});
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().code(), Code::kAborted);
  EXPECT_EQ(both.status().message(), "operation pending for volume v1");
  EXPECT_TRUE(locks.Lock("snapshot name s1").ok());  // not taken by the refused call
  {
    auto taken = locks.Lock(std::vector<std::string>{"snapshot name s1", "volume v2"});
    ASSERT_TRUE(taken.ok());
    EXPECT_FALSE(locks.Lock("volume v2").ok());
    EXPECT_FALSE(locks.Lock("snapshot name s1").ok());
  }
  EXPECT_TRUE(locks.Lock("volume v2").ok());
  EXPECT_TRUE(locks.Lock("snapshot name s1").ok());
}

TEST(OpLocks, GuardMayOutliveLocks) {
  auto locks = std::make_unique<OpLocks>();
  auto guard = locks->Lock("k");
  ASSERT_TRUE(guard.ok());
  locks.reset();
}

}  // namespace
}  // namespace nbdk
