// StagedVolumes' operation lock (csi/node/staged_volumes.h), which is an OpLocks
// keyed "volume <id>" (csi/op_locks.h).
#include <gtest/gtest.h>

#include <optional>

#include "test/csi/node/node_fixture.h"

namespace nbdk::testing {
namespace {

using StagedVolumesTest = NodeTest;

TEST_F(StagedVolumesTest, OneOperationPerVolume) {
  std::optional<VolumeOpLock> first = Lock();
  Result<VolumeOpLock> second = volumes_->Lock(kVolume);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kAborted);
  EXPECT_EQ(second.status().message(), std::string("operation pending for volume ") + kVolume);
  EXPECT_TRUE(volumes_->Lock("vol-2").ok());
  first.reset();
  EXPECT_TRUE(volumes_->Lock(kVolume).ok());
}

TEST_F(StagedVolumesTest, OneCallPerImageWhateverItsVolumeId) {
  std::optional<VolumeOpLock> first;
  {
    Result<VolumeOpLock> lock = volumes_->LockImage("rbd/img");
    ASSERT_TRUE(lock.ok());
    first.emplace(std::move(*lock));
  }
  Result<VolumeOpLock> second = volumes_->LockImage("rbd/img");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(second.status().message(),
            "image rbd/img is being staged or unstaged by another call; one volume maps an image");
  EXPECT_TRUE(volumes_->LockImage("rbd/other").ok());
  EXPECT_TRUE(volumes_->Lock("rbd/img").ok()) << "volume and image keys never collide";
  first.reset();
  EXPECT_TRUE(volumes_->LockImage("rbd/img").ok());
}

TEST_F(StagedVolumesTest, LockMayOutliveTheVolumes) {
  VolumeOpLock lock = Lock();
  volumes_.reset();
}

}  // namespace
}  // namespace nbdk::testing
