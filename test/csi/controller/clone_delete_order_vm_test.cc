// Issue 16's "delete source, snapshot and clone in every order", for what
// snapshot_vm's DeleteInEveryOrder does not cover: a clone of a volume
// (CreateVolume from a volume source: source@<new>-temp -> <new>-temp ->
// <new>) beside a snapshot of the same source. In each of the six orders,
// whatever is left keeps its data after each delete, and at the end no
// image (the clone's -temp parent included) is left, in the pool or the
// RBD trash. Not a sanity spec: it borrows the sanity fixture's client.
#include <algorithm>
#include <optional>

#include "ceph/rados_cluster.h"
#include "journal/volume_id.h"
#include "test/csi/controller/controller_vm_helpers.h"
#include "test/csi/controller/sanity_style_fixture.h"

namespace nbdk::vmtest {
namespace {

class DeleteOrderVmTest : public CsiSanityVmTest {
 protected:
  static std::string ImageOf(const std::string& id, const char* prefix) {
    auto decoded = DecodeVolumeId(id);
    return decoded.ok() ? prefix + decoded->object_uuid : "";
  }
};

TEST_F(DeleteOrderVmTest, SourceSnapshotAndCloneInEveryOrder) {
  RadosConfig rc{Ceph().conf, {}, Ceph().user, Ceph().keyfile, 30};
  auto cluster = RadosCluster::ConnectBlocking(rc);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  auto opened = IoCtx::Open(*cluster, Ceph().pool, "");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  IoCtx& io = *opened;

  const std::string data(1 << 20, 'd');
  const char* names[] = {"source", "snapshot", "clone"};
  std::vector<int> order = {0, 1, 2};
  int run = 0;
  do {
    SCOPED_TRACE(std::string(names[order[0]]) + ", " + names[order[1]] + ", " + names[order[2]]);
    const std::string n = std::to_string(run++);
    csi::v1::Volume source, clone;
    csi::v1::Snapshot snap;
    ASSERT_TRUE(MustCreateVolume(MakeCreateVolumeReq(Unique("pvc-order-src-" + n)), &source));
    ASSERT_TRUE(WriteImage(io, ImageOf(source.volume_id(), "csi-vol-"), 0, data));
    ASSERT_TRUE(MustCreateSnapshot(MakeCreateSnapshotReq(Unique("snap-order-" + n), source.volume_id()), &snap));
    csi::v1::CreateVolumeRequest clone_req = MakeCreateVolumeReq(Unique("pvc-order-clone-" + n));
    clone_req.mutable_volume_content_source()->mutable_volume()->set_volume_id(source.volume_id());
    ASSERT_TRUE(MustCreateVolume(clone_req, &clone));
    const std::string images[] = {ImageOf(source.volume_id(), "csi-vol-"), ImageOf(snap.snapshot_id(), "csi-snap-"),
                                  ImageOf(clone.volume_id(), "csi-vol-")};
    const std::string clone_temp = images[2] + "-temp";
    ASSERT_TRUE(ImageExists(io, clone_temp)) << "ceph-csi's temporary clone";

    bool deleted[3] = {false, false, false};
    for (int which : order) {
      if (which == 0) ASSERT_GRPC_OK(DeleteVolume(source.volume_id()));
      if (which == 1) ASSERT_GRPC_OK(DeleteSnapshot(snap.snapshot_id()));
      if (which == 2) ASSERT_GRPC_OK(DeleteVolume(clone.volume_id()));
      deleted[which] = true;
      for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(ImageExists(io, images[i]), !deleted[i]) << images[i];
        if (!deleted[i]) {
          EXPECT_TRUE(ReadImage(io, images[i], 0, data.size()) == data) << images[i];
        }
      }
      EXPECT_EQ(ImageExists(io, clone_temp), !deleted[2]) << clone_temp;
    }
    std::set<std::string> trash = Trash(io);
    for (const std::string& image : {images[0], images[1], images[2], clone_temp}) {
      EXPECT_FALSE(trash.count(image)) << image << " left in the trash";
    }
  } while (std::next_permutation(order.begin(), order.end()));
}

}  // namespace
}  // namespace nbdk::vmtest
