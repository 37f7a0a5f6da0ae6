// ImageSpec's path and its inverse (ceph/image_spec.h).
#include "ceph/image_spec.h"

#include <gtest/gtest.h>

namespace nbdk {
namespace {

TEST(ImageSpecTest, SplitImagePathInvertsPath) {
  for (const char* path : {"rbd/img", "rbd/ns/img"}) {
    ImageSpec image;
    ASSERT_TRUE(SplitImagePath(path, &image)) << path;
    EXPECT_EQ(image.Path(), path);
  }
  ImageSpec image;
  ASSERT_TRUE(SplitImagePath("rbd/ns/img", &image));
  EXPECT_EQ(image.pool, "rbd");
  EXPECT_EQ(image.rados_namespace, "ns");
  EXPECT_EQ(image.image, "img");
}

TEST(ImageSpecTest, SplitImagePathWantsTwoOrThreeParts) {
  for (const char* path : {"", "img", "a/b/c/d", "a/b/c/d/e/f"}) {
    ImageSpec image;
    image.pool = "kept";
    EXPECT_FALSE(SplitImagePath(path, &image)) << path;
    EXPECT_EQ(image.pool, "kept") << "untouched on failure: " << path;
  }
  ImageSpec empty_parts;
  ASSERT_TRUE(SplitImagePath("rbd//", &empty_parts)) << "parts are not checked here";
  EXPECT_EQ(empty_parts.pool, "rbd");
  EXPECT_TRUE(empty_parts.rados_namespace.empty());
  EXPECT_TRUE(empty_parts.image.empty());
}

TEST(ImageSpecTest, SplitImageSpecInvertsSpecWithAndWithoutASnapshot) {
  for (const char* spec : {"rbd/img", "rbd/ns/img", "rbd/img@monday", "rbd/ns/img@monday"}) {
    ImageSpec image;
    ASSERT_TRUE(SplitImageSpec(spec, &image)) << spec;
    EXPECT_EQ(image.Spec(), spec);
  }
  ImageSpec image;
  ASSERT_TRUE(SplitImageSpec("rbd/ns/img@monday", &image));
  EXPECT_EQ(image.Path(), "rbd/ns/img") << "the path names the image, not the snapshot";
  EXPECT_EQ(image.snap, "monday");
  ImageSpec head;
  head.snap = "stale";
  ASSERT_TRUE(SplitImageSpec("rbd/img", &head));
  EXPECT_TRUE(head.snap.empty()) << "no '@': the image itself";
}

TEST(ImageSpecTest, SplitImageSpecRefusesAnEmptySnapshotAndABadPath) {
  for (const char* spec : {"rbd/img@", "img@snap", "@snap", "a/b/c/d@snap"}) {
    ImageSpec image;
    image.pool = "kept";
    EXPECT_FALSE(SplitImageSpec(spec, &image)) << spec;
    EXPECT_EQ(image.pool, "kept") << "untouched on failure: " << spec;
  }
}

}  // namespace
}  // namespace nbdk
