#include "csi/op_locks.h"

#include <gtest/gtest.h>

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

TEST(OpLocks, GuardMayOutliveLocks) {
  auto locks = std::make_unique<OpLocks>();
  auto guard = locks->Lock("k");
  ASSERT_TRUE(guard.ok());
  locks.reset();
}

}  // namespace
}  // namespace nbdk
