// The CSI sanity suite's snapshot specs (csi-test pkg/sanity controller.go:
// "ListSnapshots", "DeleteSnapshot" and "CreateSnapshot [Controller
// Server]"). Each test names its spec: suite = Describe, comment = It.
#include <vector>

#include "test/csi/csi_sanity_vm_fixture.h"

namespace nbdk::vmtest {
namespace {

class SanityListSnapshots : public CsiSanityVmTest {
 protected:
  // The suite makes three snapshots (a target, two unrelated) for each
  // filter spec and tops up to five for paging. Snapshots cost seconds
  // under qemu TCG, so here one set of five, each of its own volume, made
  // by the first spec that needs it, serves all three; the specs ask the
  // same questions of it. Deleted after the suite.
  const std::vector<csi::v1::Snapshot>& SharedSnapshots() {
    while (shared_.size() < 5) {
      const std::string n = std::to_string(shared_.size());
      csi::v1::Snapshot snap;
      if (!MustCreateSnapshotFromNewVolume(Unique("listSnapshots-shared-volume-" + n),
                                           Unique("listSnapshots-shared-snapshot-" + n), &snap)) {
        break;
      }
      KeepAfterTest(snap.snapshot_id());
      KeepAfterTest(snap.source_volume_id());
      shared_.push_back(snap);
    }
    EXPECT_EQ(shared_.size(), 5u);
    return shared_;
  }

  static void TearDownTestSuite() {
    auto controller =
        csi::v1::Controller::NewStub(grpc::CreateChannel(Daemon().endpoint(), grpc::InsecureChannelCredentials()));
    for (auto it = shared_.rbegin(); it != shared_.rend(); ++it) {
      csi::v1::DeleteSnapshotRequest snap;
      snap.set_snapshot_id(it->snapshot_id());
      AddSecrets(&snap);
      grpc::ClientContext ctx;
      csi::v1::DeleteSnapshotResponse snap_resp;
      EXPECT_GRPC_OK(controller->DeleteSnapshot(&ctx, snap, &snap_resp));
      csi::v1::DeleteVolumeRequest vol;
      vol.set_volume_id(it->source_volume_id());
      AddSecrets(&vol);
      grpc::ClientContext vol_ctx;
      csi::v1::DeleteVolumeResponse vol_resp;
      EXPECT_GRPC_OK(controller->DeleteVolume(&vol_ctx, vol, &vol_resp));
    }
    shared_.clear();
  }

  // Every snapshot the plugin lists (no paging asked for).
  int CountAll() {
    csi::v1::ListSnapshotsResponse resp;
    grpc::Status s = ListSnapshots({}, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.entries_size();
  }

 private:
  static inline std::vector<csi::v1::Snapshot> shared_;
};

// "ListSnapshots should return appropriate values (no optional values added)"
TEST_F(SanityListSnapshots, ReturnsAppropriateValues) {
  csi::v1::ListSnapshotsResponse resp;
  ASSERT_GRPC_OK(ListSnapshots({}, &resp));
  for (const auto& e : resp.entries()) VerifySnapshotInfo(e.snapshot());
}

// "ListSnapshots should return snapshots that match the specified snapshot
// id": one of the shared five (the suite: one of three).
TEST_F(SanityListSnapshots, ReturnsSnapshotsThatMatchTheSpecifiedSnapshotId) {
  ASSERT_GE(SharedSnapshots().size(), 3u);
  const csi::v1::Snapshot& target = SharedSnapshots()[1];
  csi::v1::ListSnapshotsRequest req;
  req.set_snapshot_id(target.snapshot_id());
  csi::v1::ListSnapshotsResponse resp;
  ASSERT_GRPC_OK(ListSnapshots(req, &resp));
  ASSERT_EQ(resp.entries_size(), 1);
  VerifySnapshotInfo(resp.entries(0).snapshot());
  EXPECT_EQ(resp.entries(0).snapshot().snapshot_id(), target.snapshot_id());
}

// "ListSnapshots should return empty when the specified snapshot id does
// not exist"; and for a well-formed ID naming nothing.
TEST_F(SanityListSnapshots, ReturnsEmptyWhenTheSpecifiedSnapshotIdDoesNotExist) {
  for (const std::string& absent : {std::string("none-exist-id"), AbsentVolumeIds().back()}) {
    SCOPED_TRACE(absent);
    csi::v1::ListSnapshotsRequest req;
    req.set_snapshot_id(absent);
    csi::v1::ListSnapshotsResponse resp;
    ASSERT_GRPC_OK(ListSnapshots(req, &resp));
    EXPECT_EQ(resp.entries_size(), 0) << absent;
  }
}

// "ListSnapshots should return snapshots that match the specified source
// volume id": one of the shared five (the suite: one of three).
TEST_F(SanityListSnapshots, ReturnsSnapshotsThatMatchTheSpecifiedSourceVolumeId) {
  ASSERT_GE(SharedSnapshots().size(), 3u);
  const csi::v1::Snapshot& target = SharedSnapshots()[1];
  csi::v1::ListSnapshotsRequest req;
  req.set_source_volume_id(target.source_volume_id());
  csi::v1::ListSnapshotsResponse resp;
  ASSERT_GRPC_OK(ListSnapshots(req, &resp));
  ASSERT_EQ(resp.entries_size(), 1);
  VerifySnapshotInfo(resp.entries(0).snapshot());
  EXPECT_EQ(resp.entries(0).snapshot().source_volume_id(), target.source_volume_id());
}

// "ListSnapshots should return empty when the specified source volume id
// does not exist"
TEST_F(SanityListSnapshots, ReturnsEmptyWhenTheSpecifiedSourceVolumeIdDoesNotExist) {
  for (const std::string& absent : AbsentVolumeIds()) {
    SCOPED_TRACE(absent);
    csi::v1::ListSnapshotsRequest req;
    req.set_source_volume_id(absent);
    csi::v1::ListSnapshotsResponse resp;
    ASSERT_GRPC_OK(ListSnapshots(req, &resp));
    EXPECT_EQ(resp.entries_size(), 0) << absent;
  }
}

// "ListSnapshots check the presence of new snapshots in the snapshot list":
// one more after a create, as many as before after its delete.
TEST_F(SanityListSnapshots, CheckThePresenceOfNewSnapshotsInTheSnapshotList) {
  const int before = CountAll();
  csi::v1::Snapshot snap;
  ASSERT_TRUE(
      MustCreateSnapshotFromNewVolume(Unique("listSnapshots-volume-3"), Unique("listSnapshots-snapshot-3"), &snap));
  EXPECT_EQ(CountAll(), before + 1);
  ASSERT_GRPC_OK(DeleteSnapshot(snap.snapshot_id()));
  EXPECT_EQ(CountAll(), before);
}

// "ListSnapshots should return next token when a limited number of entries
// are requested": with the shared five (at least 5), a page of 2, then the
// rest at once from its token.
TEST_F(SanityListSnapshots, ReturnsNextTokenWhenALimitedNumberOfEntriesAreRequested) {
  ASSERT_EQ(SharedSnapshots().size(), 5u);
  const int total = CountAll();
  ASSERT_GE(total, 5);
  csi::v1::ListSnapshotsRequest req;
  req.set_max_entries(2);
  csi::v1::ListSnapshotsResponse page;
  ASSERT_GRPC_OK(ListSnapshots(req, &page));
  EXPECT_EQ(page.entries_size(), 2);
  ASSERT_FALSE(page.next_token().empty());
  csi::v1::ListSnapshotsRequest rest_req;
  rest_req.set_starting_token(page.next_token());
  csi::v1::ListSnapshotsResponse rest;
  ASSERT_GRPC_OK(ListSnapshots(rest_req, &rest));
  EXPECT_EQ(rest.entries_size(), total - 2);
  EXPECT_TRUE(rest.next_token().empty());
}

class SanityDeleteSnapshot : public CsiSanityVmTest {};

// "DeleteSnapshot [Controller Server] should fail when no snapshot id is provided"
TEST_F(SanityDeleteSnapshot, FailsWhenNoSnapshotIdIsProvided) {
  EXPECT_GRPC_CODE(DeleteSnapshot(""), Code::INVALID_ARGUMENT);
}

// "DeleteSnapshot [Controller Server] should succeed when an invalid
// snapshot id is used"; and for a well-formed one naming nothing.
TEST_F(SanityDeleteSnapshot, SucceedsWhenAnInvalidSnapshotIdIsUsed) {
  EXPECT_GRPC_OK(DeleteSnapshot("reallyfakesnapshotid"));
  EXPECT_GRPC_OK(DeleteSnapshot(AbsentVolumeIds().back()));
}

// "DeleteSnapshot [Controller Server] should return appropriate values (no
// optional values added)": the suite creates a snapshot and its cleanup
// deletes it; here the delete is explicit, and repeated.
TEST_F(SanityDeleteSnapshot, ReturnsAppropriateValues) {
  csi::v1::Snapshot snap;
  ASSERT_TRUE(
      MustCreateSnapshotFromNewVolume(Unique("DeleteSnapshot-volume-1"), Unique("DeleteSnapshot-snapshot-1"), &snap));
  EXPECT_GRPC_OK(DeleteSnapshot(snap.snapshot_id()));
  EXPECT_GRPC_OK(DeleteSnapshot(snap.snapshot_id()));
}

class SanityCreateSnapshot : public CsiSanityVmTest {};

// "CreateSnapshot [Controller Server] should fail when no name is provided"
TEST_F(SanityCreateSnapshot, FailsWhenNoNameIsProvided) {
  csi::v1::CreateSnapshotRequest req = MakeCreateSnapshotReq("", "testId");
  csi::v1::CreateSnapshotResponse resp;
  EXPECT_GRPC_CODE(CreateSnapshot(req, &resp), Code::INVALID_ARGUMENT);
}

// "CreateSnapshot [Controller Server] should fail when no source volume id is provided"
TEST_F(SanityCreateSnapshot, FailsWhenNoSourceVolumeIdIsProvided) {
  csi::v1::CreateSnapshotRequest req = MakeCreateSnapshotReq("name", "");
  csi::v1::CreateSnapshotResponse resp;
  EXPECT_GRPC_CODE(CreateSnapshot(req, &resp), Code::INVALID_ARGUMENT);
}

// "CreateSnapshot [Controller Server] should succeed when requesting to
// create a snapshot with already existing name and same source volume ID"
TEST_F(SanityCreateSnapshot, SucceedsWithAlreadyExistingNameAndSameSourceVolumeId) {
  csi::v1::Volume vol;
  ASSERT_TRUE(MustCreateVolume(MakeCreateVolumeReq(Unique("CreateSnapshot-volume-1")), &vol));
  csi::v1::CreateSnapshotRequest req = MakeCreateSnapshotReq(Unique("CreateSnapshot-snapshot-1"), vol.volume_id());
  csi::v1::Snapshot first, second;
  ASSERT_TRUE(MustCreateSnapshot(req, &first));
  ASSERT_TRUE(MustCreateSnapshot(req, &second));
  EXPECT_EQ(first.snapshot_id(), second.snapshot_id());
}

// "CreateSnapshot [Controller Server] should fail when requesting to create
// a snapshot with already existing name and different source volume ID"
TEST_F(SanityCreateSnapshot, FailsWithAlreadyExistingNameAndDifferentSourceVolumeId) {
  const std::string name = Unique("CreateSnapshot-snapshot-2");
  csi::v1::Snapshot snap;
  ASSERT_TRUE(MustCreateSnapshotFromNewVolume(Unique("CreateSnapshot-volume-2"), name, &snap));
  csi::v1::Volume vol2;
  ASSERT_TRUE(MustCreateVolume(MakeCreateVolumeReq(Unique("CreateSnapshot-volume-3")), &vol2));
  csi::v1::CreateSnapshotResponse resp;
  EXPECT_GRPC_CODE(CreateSnapshot(MakeCreateSnapshotReq(name, vol2.volume_id()), &resp), Code::ALREADY_EXISTS);
}

// "CreateSnapshot [Controller Server] should succeed when creating snapshot
// with maximum-length name" (twice, as the suite does)
TEST_F(SanityCreateSnapshot, SucceedsWithMaximumLengthName) {
  csi::v1::Volume vol;
  ASSERT_TRUE(MustCreateVolume(MakeCreateVolumeReq(Unique("CreateSnapshot-volume-maxlen-name")), &vol));
  csi::v1::CreateSnapshotRequest req =
      MakeCreateSnapshotReq(UniqueWithLength("CreateSnapshot-snapshot-maxlen", kMaxNameLength), vol.volume_id());
  csi::v1::Snapshot first, second;
  ASSERT_TRUE(MustCreateSnapshot(req, &first));
  ASSERT_TRUE(MustCreateSnapshot(req, &second));
  EXPECT_EQ(first.snapshot_id(), second.snapshot_id());
}

}  // namespace
}  // namespace nbdk::vmtest
