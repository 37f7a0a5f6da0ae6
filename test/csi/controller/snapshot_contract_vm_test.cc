// Snapshots as CSI and ceph-csi define them, against the VM's real Ceph
// through a real nbdkeeperd and gRPC: the codes the sanity suite expects
// (CreateSnapshot, ListSnapshots and its pages, DeleteSnapshot), and a
// snapshot made as ceph-csi makes it (by the CLIs) listed, restored and
// deleted by nbdkeeper.
#include <unistd.h>

#include <set>
#include <string>

#include "test/csi/controller/snapshot_vm_fixture.h"

namespace nbdk::vmtest {
namespace {

using Code = grpc::StatusCode;

TEST_F(SnapshotVmTest, CodesTheSanitySuiteExpects) {
  const std::string tag = std::to_string(::getpid());
  csi::v1::CreateVolumeResponse v1, v2;
  ASSERT_GRPC_OK(Create("pvc-codes-1-" + tag, 64 * kMiB, &v1));
  ASSERT_GRPC_OK(Create("pvc-codes-2-" + tag, 64 * kMiB, &v2));
  const std::string id1 = v1.volume().volume_id(), id2 = v2.volume().volume_id();
  csi::v1::CreateSnapshotResponse snap, other;
  ASSERT_GRPC_OK(Snap("snap-codes-" + tag, id1, &snap));
  EXPECT_EQ(Snap("snap-codes-" + tag, id2, &other).error_code(), Code::ALREADY_EXISTS);
  EXPECT_EQ(Snap("", id1, &other).error_code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(Snap("snap-x-" + tag, "", &other).error_code(), Code::INVALID_ARGUMENT);
  auto gone = DecodeVolumeId(id1);
  gone->object_uuid = "00000000-0000-4000-8000-000000000000";
  EXPECT_EQ(Snap("snap-x-" + tag, EncodeVolumeId(*gone), &other).error_code(), Code::NOT_FOUND);
  EXPECT_EQ(Snap("snap-x-" + tag, "not-a-volume", &other).error_code(), Code::NOT_FOUND);

  csi::v1::CreateVolumeResponse vol;
  EXPECT_EQ(Create("pvc-x-" + tag, 64 * kMiB, &vol, EncodeVolumeId(*gone)).error_code(), Code::NOT_FOUND);
  EXPECT_EQ(Create("pvc-x-" + tag, 64 * kMiB, &vol, "", EncodeVolumeId(*gone)).error_code(), Code::NOT_FOUND);
  EXPECT_EQ(Create("pvc-x-" + tag, 32 * kMiB, &vol, snap.snapshot().snapshot_id()).error_code(), Code::OUT_OF_RANGE);

  // ListSnapshots: by ID, by source, everything, pages, foreign tokens.
  csi::v1::CreateSnapshotResponse snap2;
  ASSERT_GRPC_OK(Snap("snap-codes-b-" + tag, id1, &snap2));
  csi::v1::ListSnapshotsRequest req;
  csi::v1::ListSnapshotsResponse resp;
  req.set_snapshot_id(snap.snapshot().snapshot_id());
  ASSERT_GRPC_OK(List(req, &resp));
  ASSERT_EQ(resp.entries_size(), 1);
  EXPECT_EQ(resp.entries(0).snapshot().source_volume_id(), id1);
  EXPECT_TRUE(resp.entries(0).snapshot().ready_to_use());
  req.set_snapshot_id("0001-0004-test-0000000000000001-00000000-0000-4000-8000-000000000000");
  resp.Clear();
  ASSERT_GRPC_OK(List(req, &resp));
  EXPECT_EQ(resp.entries_size(), 0);
  req.Clear();
  req.set_source_volume_id(id1);
  resp.Clear();
  ASSERT_GRPC_OK(List(req, &resp));
  EXPECT_EQ(resp.entries_size(), 2);
  req.set_source_volume_id(id2);
  resp.Clear();
  ASSERT_GRPC_OK(List(req, &resp));
  EXPECT_EQ(resp.entries_size(), 0);
  req.Clear();
  resp.Clear();
  ASSERT_GRPC_OK(List(req, &resp));
  std::set<std::string> all;
  for (const auto& e : resp.entries()) all.insert(e.snapshot().snapshot_id());
  EXPECT_TRUE(all.count(snap.snapshot().snapshot_id()) && all.count(snap2.snapshot().snapshot_id()));
  std::set<std::string> paged;
  req.set_max_entries(1);
  for (int pages = 0; pages < 100; ++pages) {
    resp.Clear();
    ASSERT_GRPC_OK(List(req, &resp));
    ASSERT_LE(resp.entries_size(), 1);
    for (const auto& e : resp.entries()) paged.insert(e.snapshot().snapshot_id());
    if (resp.next_token().empty()) break;
    req.set_starting_token(resp.next_token());
  }
  EXPECT_EQ(paged, all);
  req.set_starting_token("not-a-token");
  EXPECT_EQ(List(req, &resp).error_code(), Code::ABORTED);
  req.set_starting_token("100000");
  EXPECT_EQ(List(req, &resp).error_code(), Code::ABORTED);
  req.Clear();
  req.set_max_entries(-1);
  EXPECT_EQ(List(req, &resp).error_code(), Code::INVALID_ARGUMENT);

  // DeleteSnapshot: repeatable; unknown IDs are OK, an empty one is not.
  ASSERT_GRPC_OK(DeleteSnap(snap.snapshot().snapshot_id()));
  ASSERT_GRPC_OK(DeleteSnap(snap.snapshot().snapshot_id()));
  ASSERT_GRPC_OK(DeleteSnap(snap2.snapshot().snapshot_id()));
  ASSERT_GRPC_OK(DeleteSnap("not-a-snapshot-id"));
  EXPECT_EQ(DeleteSnap("").error_code(), Code::INVALID_ARGUMENT);
  ASSERT_GRPC_OK(DeleteVolume(id1));
  ASSERT_GRPC_OK(DeleteVolume(id2));
  EXPECT_TRUE(Trash(*io_).empty());
}

// A snapshot as ceph-csi's CreateSnapshot leaves it, made here with the
// `rados` and `rbd` CLIs and none of nbdkeeper's code (ceph-csi's
// internal/journal and internal/rbd: the reservation in csi.snaps.default
// and csi.snap.<uuid>, then source@csi-snap-<uuid> -> clone csi-snap-<uuid>
// (format 2, layering + deep-flatten) -> remove the source's snapshot ->
// snapshot csi-snap-<uuid>@csi-snap-<uuid>): nbdkeeper lists it with its
// source, restores it with the source's data, and deletes it leaving nothing.
TEST_F(SnapshotVmTest, ASnapshotCephCsiMadeIsListedRestoredAndDeleted) {
  const std::string tag = std::to_string(::getpid());
  csi::v1::CreateVolumeResponse source;
  ASSERT_GRPC_OK(Create("pvc-cephcsi-src-" + tag, 64 * kMiB, &source));
  const std::string source_id = source.volume().volume_id();
  const std::string source_image = ImageOf(source_id);
  const std::string data = Pattern('c', kMiB);
  ASSERT_TRUE(WriteImage(*io_, source_image, 0, data));

  const std::string uuid = "5e1ec7ed-0000-4000-8000-" + std::string(12 - tag.size(), '0') + tag;
  const std::string name = "snapshot-cephcsi-" + tag, snap_image = "csi-snap-" + uuid;
  const std::string spec = Ceph().pool + "/" + snap_image;
  ASSERT_NO_FATAL_FAILURE(Cli(Rados({"setomapval", "csi.snaps.default", "csi.snap." + name, uuid})));
  ASSERT_NO_FATAL_FAILURE(Cli(Rados({"setomapval", "csi.snap." + uuid, "csi.snapname", name})));
  ASSERT_NO_FATAL_FAILURE(Cli(Rados({"setomapval", "csi.snap." + uuid, "csi.imagename", snap_image})));
  ASSERT_NO_FATAL_FAILURE(Cli(Rados({"setomapval", "csi.snap." + uuid, "csi.source", source_image})));
  const std::string temp = Ceph().pool + "/" + source_image + "@" + snap_image;
  ASSERT_NO_FATAL_FAILURE(Cli(Rbd({"snap", "create", temp})));
  ASSERT_NO_FATAL_FAILURE(
      Cli(Rbd({"clone", "--rbd-default-clone-format", "2", "--image-feature", "layering,deep-flatten", temp, spec})));
  ASSERT_NO_FATAL_FAILURE(Cli(Rbd({"snap", "rm", temp})));
  ASSERT_NO_FATAL_FAILURE(Cli(Rbd({"snap", "create", spec + "@" + snap_image})));
  auto pool_id = cluster_->PoolId(Ceph().pool);
  ASSERT_TRUE(pool_id.ok()) << pool_id.status().ToString();
  const std::string snapshot_id = EncodeVolumeId({1, "test", *pool_id, uuid});

  csi::v1::ListSnapshotsRequest by_id;
  by_id.set_snapshot_id(snapshot_id);
  csi::v1::ListSnapshotsResponse listed;
  ASSERT_GRPC_OK(List(by_id, &listed));
  ASSERT_EQ(listed.entries_size(), 1);
  EXPECT_EQ(listed.entries(0).snapshot().source_volume_id(), source_id);
  EXPECT_EQ(listed.entries(0).snapshot().size_bytes(), 64 * kMiB);
  EXPECT_TRUE(listed.entries(0).snapshot().ready_to_use());
  csi::v1::ListSnapshotsRequest by_source;
  by_source.set_source_volume_id(source_id);
  ASSERT_GRPC_OK(List(by_source, &listed));
  ASSERT_EQ(listed.entries_size(), 1);
  EXPECT_EQ(listed.entries(0).snapshot().snapshot_id(), snapshot_id);

  // The source changes after the snapshot: the restore has the old data.
  ASSERT_TRUE(WriteImage(*io_, source_image, 0, Pattern('d', kMiB)));
  csi::v1::CreateVolumeResponse restored;
  ASSERT_GRPC_OK(Create("pvc-cephcsi-restored-" + tag, 128 * kMiB, &restored, snapshot_id));
  EXPECT_EQ(restored.volume().capacity_bytes(), 128 * kMiB);
  EXPECT_TRUE(ReadImage(*io_, ImageOf(restored.volume().volume_id()), 0, kMiB) == data);

  ASSERT_GRPC_OK(DeleteVolume(restored.volume().volume_id()));
  ASSERT_GRPC_OK(DeleteSnap(snapshot_id));
  EXPECT_FALSE(ImageExists(*io_, snap_image));
  auto directory = AllOmap(*io_, "csi.snaps.default");
  EXPECT_TRUE(!directory || directory->count("csi.snap." + name) == 0) << "the name's reservation is left";
  EXPECT_FALSE(AllOmap(*io_, "csi.snap." + uuid).has_value()) << "the snapshot's omap object is left";
  ASSERT_GRPC_OK(DeleteVolume(source_id));
  EXPECT_TRUE(Trash(*io_).empty()) << "images left in the RBD trash";
}

}  // namespace
}  // namespace nbdk::vmtest
