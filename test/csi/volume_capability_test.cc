#include "csi/volume_capability.h"

#include <gtest/gtest.h>

namespace nbdk {
namespace {

using Cap = csi::v1::VolumeCapability;
using Mode = csi::v1::VolumeCapability::AccessMode;

Cap Mount(std::string fs_type, Mode::Mode mode, std::vector<std::string> flags = {}) {
  Cap cap;
  cap.mutable_mount()->set_fs_type(std::move(fs_type));
  for (auto& f : flags) cap.mutable_mount()->add_mount_flags(f);
  cap.mutable_access_mode()->set_mode(mode);
  return cap;
}

Cap Block(Mode::Mode mode) {
  Cap cap;
  cap.mutable_block();
  cap.mutable_access_mode()->set_mode(mode);
  return cap;
}

Result<VolumeCapabilitySpec> Parse(const Cap& cap, Code unsupported = Code::kFailedPrecondition) {
  return ParseVolumeCapability(cap, "volume_capability", unsupported);
}

void ExpectError(const Result<VolumeCapabilitySpec>& r, Code code, std::string_view mentions) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), code) << r.status().ToString();
  EXPECT_NE(r.status().message().find(mentions), std::string::npos) << r.status().message();
}

TEST(VolumeCapabilityTest, MountDefaultsToExt4) {
  auto r = Parse(Mount("", Mode::SINGLE_NODE_WRITER));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->block);
  EXPECT_EQ(r->fs_type, "ext4");
  EXPECT_FALSE(r->read_only);
  EXPECT_FALSE(r->multi_node);
  EXPECT_EQ(Parse(Mount("xfs", Mode::SINGLE_NODE_WRITER))->fs_type, "xfs");
}

TEST(VolumeCapabilityTest, SingleNodeModesAreAccepted) {
  for (auto mode : {Mode::SINGLE_NODE_WRITER, Mode::SINGLE_NODE_SINGLE_WRITER, Mode::SINGLE_NODE_MULTI_WRITER}) {
    auto r = Parse(Mount("ext4", mode));
    ASSERT_TRUE(r.ok()) << Mode::Mode_Name(mode);
    EXPECT_EQ(r->access_mode, mode);
    EXPECT_FALSE(r->read_only);
  }
  auto ro = Parse(Mount("ext4", Mode::SINGLE_NODE_READER_ONLY));
  ASSERT_TRUE(ro.ok());
  EXPECT_TRUE(ro->read_only);
  EXPECT_FALSE(ro->multi_node);
}

TEST(VolumeCapabilityTest, ReadOnlyManyIsReadOnlyForMountAndBlock) {
  for (const Cap& cap : {Mount("ext4", Mode::MULTI_NODE_READER_ONLY), Block(Mode::MULTI_NODE_READER_ONLY)}) {
    auto r = Parse(cap);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->read_only);
    EXPECT_TRUE(r->multi_node);
  }
}

TEST(VolumeCapabilityTest, MultiNodeMultiWriterOnlyForBlock) {
  auto block = Parse(Block(Mode::MULTI_NODE_MULTI_WRITER));
  ASSERT_TRUE(block.ok()) << block.status().ToString();
  EXPECT_TRUE(block->block);
  EXPECT_TRUE(block->multi_node);
  EXPECT_TRUE(block->fs_type.empty());
  ExpectError(Parse(Mount("ext4", Mode::MULTI_NODE_MULTI_WRITER)), Code::kFailedPrecondition,
              "volume_capability.access_mode: MULTI_NODE_MULTI_WRITER is supported only for block");
}

TEST(VolumeCapabilityTest, UnsupportedModeAndFsTypeUseTheGivenCode) {
  ExpectError(Parse(Block(Mode::MULTI_NODE_SINGLE_WRITER)), Code::kFailedPrecondition,
              "volume_capability.access_mode: MULTI_NODE_SINGLE_WRITER is not supported");
  ExpectError(Parse(Mount("btrfs", Mode::SINGLE_NODE_WRITER)), Code::kFailedPrecondition,
              "volume_capability.mount.fs_type: 'btrfs' is not supported");
  ExpectError(Parse(Mount("btrfs", Mode::SINGLE_NODE_WRITER), Code::kInvalidArgument), Code::kInvalidArgument,
              "fs_type");
  Cap unknown = Block(Mode::SINGLE_NODE_WRITER);
  unknown.mutable_access_mode()->set_mode(static_cast<Mode::Mode>(42));
  ExpectError(Parse(unknown), Code::kFailedPrecondition, "access_mode: 42 is not supported");
}

TEST(VolumeCapabilityTest, MissingAccessTypeOrModeIsInvalidArgument) {
  Cap no_type;
  no_type.mutable_access_mode()->set_mode(Mode::SINGLE_NODE_WRITER);
  ExpectError(Parse(no_type), Code::kInvalidArgument, "volume_capability: one of block or mount must be set");
  Cap no_mode;
  no_mode.mutable_block();
  ExpectError(Parse(no_mode), Code::kInvalidArgument, "volume_capability.access_mode: missing");
  ExpectError(Parse(Block(Mode::UNKNOWN)), Code::kInvalidArgument, "volume_capability.access_mode: missing");
}

TEST(VolumeCapabilityTest, MountFlagsAreSplitIntoSingleOptions) {
  auto r = Parse(Mount("ext4", Mode::SINGLE_NODE_WRITER, {"noatime", "discard,nodiratime", ""}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->mount_options, (std::vector<std::string>{"noatime", "discard", "nodiratime"}));
}

TEST(VolumeCapabilityTest, BadMountFlagIsNamedByIndexNotText) {
  auto r = Parse(Mount("ext4", Mode::SINGLE_NODE_WRITER, {"noatime", "password=hunter2 x"}));
  ExpectError(r, Code::kInvalidArgument, "volume_capability.mount.mount_flags[1]: contains whitespace");
  EXPECT_EQ(r.status().message().find("hunter2"), std::string::npos);
  ExpectError(Parse(Mount("ext4", Mode::SINGLE_NODE_WRITER, {std::string("a\0b", 3)})), Code::kInvalidArgument,
              "mount_flags[0]");
}

TEST(VolumeCapabilityTest, MountFlagsOver4KiBAreRejected) {
  std::vector<std::string> flags(5, std::string(1000, 'a'));
  ExpectError(Parse(Mount("ext4", Mode::SINGLE_NODE_WRITER, flags)), Code::kInvalidArgument, "more than 4 KiB");
}

}  // namespace
}  // namespace nbdk
