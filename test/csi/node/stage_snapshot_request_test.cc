// NodeStageVolume of a snapshot (volume context imageSnapshot,
// csi/node/node_request.h): read by Ceph's name rule, only with a read-only
// capability, never encrypted or with the image's lock.
#include <gtest/gtest.h>

#include "csi/node/node_request.h"
#include "test/csi/node/node_requests.h"

namespace nbdk {
namespace {

// A static snapshot volume as `nbdkeeperctl map rbd/db@monday` stages it.
csi::v1::NodeStageVolumeRequest SnapshotStage(Mode::Mode mode = Mode::SINGLE_NODE_READER_ONLY) {
  csi::v1::NodeStageVolumeRequest r;
  r.set_volume_id("db.snap.monday");
  r.set_staging_target_path("/var/lib/nbdkeeper/staging/db.snap.monday");
  r.mutable_volume_capability()->mutable_mount()->set_fs_type("ext4");
  r.mutable_volume_capability()->mutable_access_mode()->set_mode(mode);
  (*r.mutable_secrets())["userID"] = "admin";
  (*r.mutable_secrets())["userKey"] = kKey;
  auto& ctx = *r.mutable_volume_context();
  ctx["staticVolume"] = "true";
  ctx["clusterID"] = "ceph";
  ctx["pool"] = "rbd";
  ctx["imageName"] = "db";
  ctx["imageSnapshot"] = "monday";
  ctx["mapOptions"] = "nbd:try-netlink";
  return r;
}

TEST(SnapshotRequestTest, AStaticSnapshotNamesItsImageApartFromTheVolumeId) {
  auto r = ParseStageRequest(SnapshotStage());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->snapshot, "monday");
  EXPECT_EQ(r->image_name, "db") << "imageName, not the volume ID, so the image is staged beside it";
  EXPECT_TRUE(r->capability.read_only);

  auto req = SnapshotStage();
  req.set_volume_id("db");
  req.mutable_volume_context()->erase("imageName");
  r = ParseStageRequest(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->image_name, "db") << "without imageName, as any static volume: its ID";

  req = SnapshotStage();
  req.mutable_volume_context()->erase("imageSnapshot");
  req.mutable_volume_capability()->mutable_access_mode()->set_mode(Mode::SINGLE_NODE_WRITER);
  r = ParseStageRequest(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->snapshot, "");
  EXPECT_EQ(r->image_name, "db.snap.monday") << "no snapshot: ceph-csi's rule, imageName ignored";
}

TEST(SnapshotRequestTest, EveryReaderOnlyModeMayMapASnapshot) {
  for (Mode::Mode mode : {Mode::SINGLE_NODE_READER_ONLY, Mode::MULTI_NODE_READER_ONLY}) {
    auto r = ParseStageRequest(SnapshotStage(mode));
    EXPECT_TRUE(r.ok()) << Mode::Mode_Name(mode) << ": " << r.status().ToString();
  }
}

// A writer's capability would stage a snapshot no write reaches: refused,
// naming the field, whatever the writing mode.
TEST(SnapshotRequestTest, AWritingAccessModeIsRefusedNamingTheField) {
  for (Mode::Mode mode : {Mode::SINGLE_NODE_WRITER, Mode::SINGLE_NODE_SINGLE_WRITER, Mode::SINGLE_NODE_MULTI_WRITER}) {
    auto r = ParseStageRequest(SnapshotStage(mode));
    ASSERT_FALSE(r.ok()) << Mode::Mode_Name(mode);
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("volume_context: imageSnapshot"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("READER_ONLY"), std::string::npos) << r.status().message();
  }
}

TEST(SnapshotRequestTest, ANameCephRefusesIsRefusedByTheSameRule) {
  for (const char* bad : {"-x", "a@b", "a/b", "..", "tab\there"}) {
    auto req = SnapshotStage();
    (*req.mutable_volume_context())["imageSnapshot"] = bad;
    auto r = ParseStageRequest(req);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("volume_context: imageSnapshot"), std::string::npos) << r.status().message();
  }
}

TEST(SnapshotRequestTest, NeitherTheImagesLockNorEncryptionGoesWithASnapshot) {
  auto req = SnapshotStage();
  (*req.mutable_volume_context())["mapOptions"] = "nbd:try-netlink,exclusive";
  auto r = ParseStageRequest(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("mapOptions"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("exclusive"), std::string::npos) << r.status().message();

  req = SnapshotStage();
  (*req.mutable_volume_context())["encrypted"] = "true";
  (*req.mutable_secrets())["encryptionPassphrase"] = "SECRET-passphrase";
  r = ParseStageRequest(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("imageSnapshot"), std::string::npos) << r.status().message();
  EXPECT_EQ(r.status().message().find("SECRET"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace nbdk
