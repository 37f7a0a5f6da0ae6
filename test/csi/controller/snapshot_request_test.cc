#include "csi/controller/snapshot_request.h"

#include <gtest/gtest.h>

namespace nbdk {
namespace {

constexpr char kVolumeId[] = "0001-0009-rook-ceph-0000000000000002-b0a3c3d5-1d1a-4a9e-9a8f-2d7e0d9b7d51";
constexpr char kSnapId[] = "0001-0009-rook-ceph-0000000000000002-c1c1c1c1-1d1a-4a9e-9a8f-2d7e0d9b7d51";
constexpr char kKey[] = "AQBsecretKEYvalue0123456789abcdefghij==";

template <typename Request>
void SetSecrets(Request* r) {
  (*r->mutable_secrets())["userID"] = "csi-rbd-provisioner";
  (*r->mutable_secrets())["userKey"] = kKey;
}

csi::v1::CreateSnapshotRequest ValidCreate() {
  csi::v1::CreateSnapshotRequest r;
  r.set_name("snapshot-1");
  r.set_source_volume_id(kVolumeId);
  (*r.mutable_parameters())["clusterID"] = "rook-ceph";
  SetSecrets(&r);
  return r;
}

TEST(CreateSnapshotRequest, ValidParses) {
  auto p = ParseCreateSnapshotRequest(ValidCreate());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->name, "snapshot-1");
  EXPECT_EQ(p->source.volume_id, kVolumeId);
  EXPECT_EQ(p->source.decoded.cluster_id, "rook-ceph");
  EXPECT_EQ(p->source.secrets.user_key, kKey);
}

TEST(CreateSnapshotRequest, CodesAreTheSpecs) {
  auto r = ValidCreate();
  r.clear_name();
  EXPECT_EQ(ParseCreateSnapshotRequest(r).status().code(), Code::kInvalidArgument);
  r = ValidCreate();
  r.set_name("has space");
  EXPECT_EQ(ParseCreateSnapshotRequest(r).status().code(), Code::kInvalidArgument);
  r = ValidCreate();
  r.clear_source_volume_id();
  auto s = ParseCreateSnapshotRequest(r).status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("source_volume_id"), std::string::npos);
  r = ValidCreate();
  r.set_source_volume_id("not-a-volume-of-this-driver");
  EXPECT_EQ(ParseCreateSnapshotRequest(r).status().code(), Code::kNotFound);
  r = ValidCreate();
  r.mutable_secrets()->erase("userKey");
  s = ParseCreateSnapshotRequest(r).status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message().find(kKey), std::string::npos);
}

TEST(DeleteSnapshotRequest, UnknownIdIsNoSnapshotAndEmptyIsInvalid) {
  csi::v1::DeleteSnapshotRequest r;
  SetSecrets(&r);
  EXPECT_EQ(ParseDeleteSnapshotRequest(r).status().code(), Code::kInvalidArgument);
  r.set_snapshot_id("garbage");
  auto p = ParseDeleteSnapshotRequest(r);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(*p);
  r.set_snapshot_id(kSnapId);
  p = ParseDeleteSnapshotRequest(r);
  ASSERT_TRUE(p.ok() && *p);
  EXPECT_EQ((*p)->decoded.object_uuid, "c1c1c1c1-1d1a-4a9e-9a8f-2d7e0d9b7d51");
}

TEST(ListSnapshotsRequest, TokensFiltersAndPaging) {
  csi::v1::ListSnapshotsRequest r;
  SetSecrets(&r);
  auto p = ParseListSnapshotsRequest(r);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->offset, 0u);
  EXPECT_EQ(p->max_entries, 0);
  EXPECT_FALSE(p->matches_nothing);

  r.set_max_entries(-1);
  EXPECT_EQ(ParseListSnapshotsRequest(r).status().code(), Code::kInvalidArgument);
  r.set_max_entries(2);
  for (const char* bad : {"x", "-1", "1x", " 1"}) {
    r.set_starting_token(bad);
    EXPECT_EQ(ParseListSnapshotsRequest(r).status().code(), Code::kAborted) << bad;
  }
  r.set_starting_token("4");
  p = ParseListSnapshotsRequest(r);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->offset, 4u);

  r.set_snapshot_id(kSnapId);
  r.set_source_volume_id(kVolumeId);
  p = ParseListSnapshotsRequest(r);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(p->snapshot_id && p->source_volume_id);
  EXPECT_FALSE(p->matches_nothing);
  r.set_snapshot_id("no-such-id");
  p = ParseListSnapshotsRequest(r);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->matches_nothing);
}

TEST(SnapshotRequests, HugeFieldsAreQuotedBounded) {
  const std::string huge = "\x1b[2J" + std::string(65532, 'a');
  auto create = ValidCreate();
  create.set_source_volume_id(huge);
  csi::v1::ListSnapshotsRequest list;
  list.set_starting_token(huge);
  for (const Status& s : {ParseCreateSnapshotRequest(create).status(), ParseListSnapshotsRequest(list).status()}) {
    EXPECT_FALSE(s.ok());
    EXPECT_LT(s.message().size(), 1024u) << s.message().substr(0, 400);
    EXPECT_NE(s.message().find("'\\x1b[2Jaaa"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("aaa' (65536 bytes)"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace nbdk
