// The requests on a staged volume read and checked
// (csi/node/node_request.h): publish, unpublish, unstage, stats, expand.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "csi/node/node_request.h"
#include "test/csi/node/node_requests.h"

namespace nbdk {
namespace {

TEST(PublishRequestTest, ParsesAndCombinesReadOnly) {
  auto r = ParsePublishRequest(ValidPublish());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->target_path, kTarget);
  EXPECT_EQ(r->staging_target_path, kStaging);
  EXPECT_FALSE(r->read_only);

  auto flagged = ValidPublish();
  flagged.set_readonly(true);
  EXPECT_TRUE(ParsePublishRequest(flagged)->read_only);
  auto rox = ValidPublish();
  SetMount(rox.mutable_volume_capability(), Mode::MULTI_NODE_READER_ONLY);
  EXPECT_TRUE(ParsePublishRequest(rox)->read_only);
}

TEST(PublishRequestTest, EachInvalidFieldIsNamed) {
  auto with = [](std::function<void(csi::v1::NodePublishVolumeRequest*)> f) {
    auto r = ValidPublish();
    f(&r);
    return ParsePublishRequest(r);
  };
  ExpectError(with([](auto* r) { r->clear_volume_id(); }), Code::kInvalidArgument, "volume_id: missing");
  ExpectError(with([](auto* r) { r->clear_target_path(); }), Code::kInvalidArgument, "target_path: missing");
  ExpectError(with([](auto* r) { r->set_target_path("/a/../b"); }), Code::kInvalidArgument, "target_path: '/a/../b'");
  // The spec's "Staging target path not set".
  ExpectError(with([](auto* r) { r->clear_staging_target_path(); }), Code::kFailedPrecondition,
              "staging_target_path: missing");
  ExpectError(with([](auto* r) { r->set_staging_target_path("rel"); }), Code::kInvalidArgument,
              "staging_target_path: 'rel' is not an absolute path");
  ExpectError(with([](auto* r) { r->clear_volume_capability(); }), Code::kInvalidArgument,
              "volume_capability: missing");
  ExpectError(with([](auto* r) { r->mutable_volume_capability()->mutable_mount()->set_fs_type("ntfs"); }),
              Code::kFailedPrecondition, "fs_type");
}

TEST(UnstageRequestTest, RequiresVolumeIdAndStagingPath) {
  csi::v1::NodeUnstageVolumeRequest r;
  r.set_volume_id("my-image");  // static volume IDs are not decoded here
  r.set_staging_target_path(kStaging);
  auto ok = ParseUnstageRequest(r);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->volume_id, "my-image");
  EXPECT_EQ(ok->staging_target_path, kStaging);
  r.clear_staging_target_path();
  ExpectError(ParseUnstageRequest(r), Code::kInvalidArgument, "staging_target_path: missing");
  r.set_staging_target_path(kStaging);
  r.clear_volume_id();
  ExpectError(ParseUnstageRequest(r), Code::kInvalidArgument, "volume_id: missing");
}

TEST(UnpublishRequestTest, RequiresVolumeIdAndTargetPath) {
  csi::v1::NodeUnpublishVolumeRequest r;
  r.set_volume_id(kVolumeId);
  r.set_target_path(kTarget);
  auto ok = ParseUnpublishRequest(r);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->target_path, kTarget);
  r.set_target_path("/x/");
  ExpectError(ParseUnpublishRequest(r), Code::kInvalidArgument, "target_path: '/x/' is not clean");
  r.clear_target_path();
  ExpectError(ParseUnpublishRequest(r), Code::kInvalidArgument, "target_path: missing");
  r.set_target_path(kTarget);
  r.set_volume_id(std::string(129, 'v'));
  ExpectError(ParseUnpublishRequest(r), Code::kInvalidArgument, "volume_id: 129 bytes");
}

TEST(VolumeStatsRequestTest, VolumePathRequiredStagingOptional) {
  csi::v1::NodeGetVolumeStatsRequest r;
  r.set_volume_id(kVolumeId);
  r.set_volume_path(kTarget);
  auto ok = ParseVolumeStatsRequest(r);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->staging_target_path, "");
  // Path syntax is not the parser's: the volume is looked up first (NOT_FOUND),
  // then the path must be one the journal records for it (NOT_FOUND).
  r.set_volume_path("some/relative/path");
  EXPECT_TRUE(ParseVolumeStatsRequest(r).ok());
  r.clear_volume_path();
  ExpectError(ParseVolumeStatsRequest(r), Code::kInvalidArgument, "volume_path: missing");
  r.set_volume_path(kTarget);
  r.clear_volume_id();
  ExpectError(ParseVolumeStatsRequest(r), Code::kInvalidArgument, "volume_id: missing");
}

TEST(ExpandRequestTest, ParsesOptionalFields) {
  csi::v1::NodeExpandVolumeRequest r;
  r.set_volume_id(kVolumeId);
  r.set_volume_path(kTarget);
  auto bare = ParseExpandRequest(r);
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_FALSE(bare->capability.has_value());
  EXPECT_EQ(bare->required_bytes, 0);

  r.set_staging_target_path(kStaging);
  r.mutable_capacity_range()->set_required_bytes(1 << 30);
  SetMount(r.mutable_volume_capability());
  auto full = ParseExpandRequest(r);
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(full->required_bytes, 1 << 30);
  ASSERT_TRUE(full->capability.has_value());
  EXPECT_EQ(full->capability->fs_type, "ext4");
}

TEST(ExpandRequestTest, EachInvalidFieldIsNamed) {
  auto with = [](std::function<void(csi::v1::NodeExpandVolumeRequest*)> f) {
    csi::v1::NodeExpandVolumeRequest r;
    r.set_volume_id(kVolumeId);
    r.set_volume_path(kTarget);
    f(&r);
    return ParseExpandRequest(r);
  };
  ExpectError(with([](auto* r) { r->clear_volume_id(); }), Code::kInvalidArgument, "volume_id: missing");
  ExpectError(with([](auto* r) { r->clear_volume_path(); }), Code::kInvalidArgument, "volume_path: missing");
  EXPECT_TRUE(with([](auto* r) { r->set_volume_path("relative"); }).ok()) << "looked up before its syntax";
  ExpectError(with([](auto* r) { r->mutable_capacity_range()->set_required_bytes(-1); }), Code::kInvalidArgument,
              "capacity_range.required_bytes: negative");
  ExpectError(with([](auto* r) { r->mutable_capacity_range()->set_limit_bytes(-1); }), Code::kInvalidArgument,
              "capacity_range.limit_bytes: negative");
  ExpectError(with([](auto* r) {
                r->mutable_capacity_range()->set_required_bytes(10);
                r->mutable_capacity_range()->set_limit_bytes(5);
              }),
              Code::kInvalidArgument, "required_bytes 10 exceeds limit_bytes 5");
  // NodeExpandVolume's table: "Exceeds capabilities" is INVALID_ARGUMENT.
  ExpectError(with([](auto* r) { SetMount(r->mutable_volume_capability(), Mode::MULTI_NODE_MULTI_WRITER); }),
              Code::kInvalidArgument, "MULTI_NODE_MULTI_WRITER");
}

}  // namespace
}  // namespace nbdk
