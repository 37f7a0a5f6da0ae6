#include "csi/node/confined_path.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace nbdk {
namespace {

namespace fs = std::filesystem;

class ConfinedPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::path(::testing::TempDir()) / ("confined-" + std::to_string(::getpid()));
    fs::remove_all(base_);
    root_ = (base_ / "kubelet").string();
    outside_ = (base_ / "outside").string();
    fs::create_directories(root_ + "/pods/p1");
    fs::create_directories(outside_ + "/precious");
    std::ofstream(outside_ + "/file") << "keep";
    fs::create_directory_symlink(outside_, root_ + "/pods/escape");
  }
  void TearDown() override { fs::remove_all(base_); }

  fs::path base_;
  std::string root_;
  std::string outside_;
};

TEST_F(ConfinedPathTest, PathsBeneathTheRootAreInspected) {
  EXPECT_EQ(*InspectBeneath({root_}, root_ + "/pods/p1", "target_path"), PathKind::kDirectory);
  EXPECT_EQ(*InspectBeneath({root_}, root_ + "/pods/p1/new", "target_path"), PathKind::kMissing);
  EXPECT_EQ(*InspectBeneath({root_}, root_ + "/pods/gone/new", "target_path"), PathKind::kMissing);
}

TEST_F(ConfinedPathTest, OutsideTheRootIsInvalidArgument) {
  for (const std::string& p : {outside_ + "/file", root_, root_ + "x/a", std::string("/etc/passwd")}) {
    auto r = InspectBeneath({root_}, p, "target_path");
    ASSERT_FALSE(r.ok()) << p;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << p;
    EXPECT_NE(r.status().message().find("csi_root"), std::string::npos) << r.status().message();
  }
}

TEST_F(ConfinedPathTest, SymlinksAnywhereBelowTheRootAreRefused) {
  auto through = InspectBeneath({root_}, root_ + "/pods/escape/precious", "target_path");
  ASSERT_FALSE(through.ok());
  EXPECT_EQ(through.status().code(), Code::kInvalidArgument) << through.status().ToString();
  auto leaf = InspectBeneath({root_}, root_ + "/pods/escape", "target_path");
  ASSERT_FALSE(leaf.ok());
  EXPECT_EQ(leaf.status().code(), Code::kInvalidArgument) << leaf.status().ToString();
  EXPECT_FALSE(CreateMountPointBeneath({root_}, root_ + "/pods/escape/new", false, "target_path").ok());
  EXPECT_FALSE(fs::exists(outside_ + "/new"));
  EXPECT_FALSE(RemoveCreatedMountPoint({root_}, root_ + "/pods/escape/precious", "target_path").ok());
  EXPECT_TRUE(fs::exists(outside_ + "/precious"));
}

TEST_F(ConfinedPathTest, APathIsConfinedBeneathTheRootItLiesIn) {
  fs::create_directories(outside_ + "/mnt");
  PathRoots roots = {root_, outside_ + "/mnt"};
  EXPECT_EQ(*InspectBeneath(roots, outside_ + "/mnt/data", "target_path"), PathKind::kMissing);
  EXPECT_EQ(InspectBeneath(roots, outside_ + "/precious", "target_path").status().code(), Code::kInvalidArgument);
}

TEST_F(ConfinedPathTest, CreateSaysWhetherItMadeTheMountPoint) {
  auto made = CreateMountPointBeneath({root_}, root_ + "/pods/p1/vol", false, "target_path");
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_TRUE(*made);
  EXPECT_FALSE(*CreateMountPointBeneath({root_}, root_ + "/pods/p1/vol", false, "target_path")) << "kept, not made";
  auto file = CreateMountPointBeneath({root_}, root_ + "/pods/p1/dev", true, "target_path");
  ASSERT_TRUE(file.ok());
  EXPECT_TRUE(fs::is_regular_file(root_ + "/pods/p1/dev"));
  auto wrong = CreateMountPointBeneath({root_}, root_ + "/pods/p1/vol", true, "target_path");
  EXPECT_EQ(wrong.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(CreateMountPointBeneath({root_}, root_ + "/pods/none/vol", false, "target_path").status().code(),
            Code::kFailedPrecondition);
  EXPECT_TRUE(RemoveCreatedMountPoint({root_}, root_ + "/pods/p1/vol", "target_path").ok());
  EXPECT_TRUE(RemoveCreatedMountPoint({root_}, root_ + "/pods/p1/dev", "target_path").ok());
  EXPECT_FALSE(fs::exists(root_ + "/pods/p1/vol"));
  EXPECT_TRUE(RemoveCreatedMountPoint({root_}, root_ + "/pods/p1/vol", "target_path").ok()) << "gone is fine";
}

TEST_F(ConfinedPathTest, ANonEmptyDirectoryIsNeverRemoved) {
  fs::create_directories(root_ + "/pods/p1/full");
  std::ofstream(root_ + "/pods/p1/full/data") << "x";
  EXPECT_FALSE(RemoveCreatedMountPoint({root_}, root_ + "/pods/p1/full", "target_path").ok());
  EXPECT_TRUE(fs::exists(root_ + "/pods/p1/full/data"));
}

}  // namespace
}  // namespace nbdk
