// Snapshots and clones hold exactly their data, against the VM's real Ceph
// through a real nbdkeeperd and gRPC: a 1 GiB volume staged (live, mapped
// by rbd-nbd) is written, snapshotted, written again; the snapshot restored
// into a larger volume and staged holds exactly the snapshot's data; a
// clone of the live volume holds its data at clone time; ceph-csi's omap
// keys and image names; deleting source, snapshot and restored volume in
// every order loses no data and leaves nothing.
#include <rbd/librbd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <vector>

#include "test/csi/controller/snapshot_vm_fixture.h"

namespace nbdk::vmtest {
namespace {

TEST_F(SnapshotVmTest, RestoreAndCloneHoldExactlyTheirData) {
  const std::string tag = std::to_string(::getpid());
  csi::v1::CreateVolumeResponse source;
  ASSERT_GRPC_OK(Create("pvc-src-" + tag, kGiB, &source));
  const std::string source_id = source.volume().volume_id();
  const std::string device = StageBlock(source_id);
  ASSERT_FALSE(device.empty());

  // Before the snapshot: A at 0 and at 900 MiB. After: B over 4..12 MiB.
  const std::string a = Pattern('a', 8 * kMiB), b = Pattern('b', 8 * kMiB), zeros(4 * kMiB, '\0');
  ASSERT_TRUE(WriteAt(device, 0, a));
  ASSERT_TRUE(WriteAt(device, 900 * kMiB, a));

  auto t0 = std::chrono::steady_clock::now();
  csi::v1::CreateSnapshotResponse snap;
  ASSERT_GRPC_OK(Snap("snap-" + tag, source_id, &snap));
  double snapshot_s = Seconds(t0);
  const csi::v1::Snapshot& s = snap.snapshot();
  EXPECT_TRUE(s.ready_to_use());
  EXPECT_EQ(s.source_volume_id(), source_id);
  EXPECT_EQ(s.size_bytes(), kGiB);
  EXPECT_GT(s.creation_time().seconds(), 0);
  ASSERT_TRUE(WriteAt(device, 4 * kMiB, b));

  // Idempotent by name; the name is taken for any other source.
  csi::v1::CreateSnapshotResponse again;
  ASSERT_GRPC_OK(Snap("snap-" + tag, source_id, &again));
  EXPECT_EQ(again.snapshot().snapshot_id(), s.snapshot_id());

  // ceph-csi's layout: keys, the snapshot image, its RBD snapshot, and no
  // temporary snapshot left on the source.
  auto snap_id = DecodeVolumeId(s.snapshot_id());
  ASSERT_TRUE(snap_id.ok()) << s.snapshot_id();
  const std::string snap_image = "csi-snap-" + snap_id->object_uuid;
  auto dir = AllOmap(*io_, "csi.snaps.default");
  ASSERT_TRUE(dir);
  EXPECT_EQ(dir->at("csi.snap.snap-" + tag), snap_id->object_uuid);
  auto keys = AllOmap(*io_, "csi.snap." + snap_id->object_uuid);
  ASSERT_TRUE(keys);
  EXPECT_EQ(*keys,
            (std::map<std::string, std::string>{
                {"csi.snapname", "snap-" + tag}, {"csi.imagename", snap_image}, {"csi.source", ImageOf(source_id)}}));
  EXPECT_TRUE(ImageExists(*io_, snap_image));

  // Restore into a larger volume, stage it: exactly the snapshot's data.
  t0 = std::chrono::steady_clock::now();
  csi::v1::CreateVolumeResponse restored;
  ASSERT_GRPC_OK(Create("pvc-restored-" + tag, 2 * kGiB, &restored, s.snapshot_id()));
  double restore_s = Seconds(t0);
  EXPECT_EQ(restored.volume().capacity_bytes(), 2 * kGiB);
  EXPECT_EQ(restored.volume().content_source().snapshot().snapshot_id(), s.snapshot_id());
  const std::string restored_id = restored.volume().volume_id();
  const std::string restored_device = StageBlock(restored_id);
  ASSERT_FALSE(restored_device.empty());
  EXPECT_TRUE(ReadAt(restored_device, 0, 8 * kMiB) == a) << "snapshot data at 0";
  EXPECT_TRUE(ReadAt(restored_device, 8 * kMiB, 4 * kMiB) == zeros) << "the write after the snapshot leaked";
  EXPECT_TRUE(ReadAt(restored_device, 900 * kMiB, 8 * kMiB) == a);
  EXPECT_TRUE(ReadAt(restored_device, 1536 * kMiB, 4 * kMiB) == zeros) << "the grown part";
  ASSERT_GRPC_OK(Unstage(restored_id));

  // Clone the live volume: its data now (A, then B over 4..12 MiB).
  t0 = std::chrono::steady_clock::now();
  csi::v1::CreateVolumeResponse clone;
  ASSERT_GRPC_OK(Create("pvc-clone-" + tag, kGiB, &clone, "", source_id));
  double clone_s = Seconds(t0);
  const std::string clone_image = ImageOf(clone.volume().volume_id());
  std::string want = a.substr(0, 4 * kMiB) + b;
  EXPECT_TRUE(ReadImage(*io_, clone_image, 0, 12 * kMiB) == want);
  EXPECT_TRUE(ReadImage(*io_, clone_image, 900 * kMiB, 8 * kMiB) == a);
  EXPECT_TRUE(ImageExists(*io_, clone_image + "-temp")) << "ceph-csi's temporary clone";
  std::cout << "timings (1 GiB image, qemu TCG): snapshot " << snapshot_s << " s, restore " << restore_s << " s, clone "
            << clone_s << " s\n";

  // Writes to the source after all that change none of them.
  ASSERT_TRUE(WriteAt(device, 0, b));
  EXPECT_TRUE(ReadImage(*io_, clone_image, 0, 4 * kMiB) == a.substr(0, 4 * kMiB));
  ASSERT_GRPC_OK(Unstage(source_id));

  // The source is deleted first: snapshot and clones keep their data.
  ASSERT_GRPC_OK(DeleteVolume(source_id));
  EXPECT_FALSE(ImageExists(*io_, ImageOf(source_id)));
  EXPECT_TRUE(ReadImage(*io_, clone_image, 0, 4 * kMiB) == a.substr(0, 4 * kMiB));
  EXPECT_TRUE(ReadImage(*io_, ImageOf(restored_id), 900 * kMiB, 8 * kMiB) == a);
  ASSERT_GRPC_OK(DeleteVolume(clone.volume().volume_id()));
  ASSERT_GRPC_OK(DeleteSnap(s.snapshot_id()));
  EXPECT_TRUE(ReadImage(*io_, ImageOf(restored_id), 0, 8 * kMiB) == a);
  ASSERT_GRPC_OK(DeleteVolume(restored_id));
  for (const std::string& image : {ImageOf(source_id), snap_image, clone_image, clone_image + "-temp"}) {
    EXPECT_FALSE(ImageExists(*io_, image)) << image;
    EXPECT_FALSE(Trash(*io_).count(image)) << image << " left in the trash";
  }
  EXPECT_FALSE(AllOmap(*io_, "csi.snap." + snap_id->object_uuid));
}

// Source volume, snapshot and restored volume deleted in all six orders;
// whatever is left keeps its data, and nothing is left at the end.
TEST_F(SnapshotVmTest, DeleteInEveryOrder) {
  const std::string tag = std::to_string(::getpid());
  std::vector<int> order = {0, 1, 2};
  const char* names[] = {"source", "snapshot", "restored"};
  int run = 0;
  do {
    SCOPED_TRACE(std::string(names[order[0]]) + ", " + names[order[1]] + ", " + names[order[2]]);
    const std::string n = tag + "-" + std::to_string(run++);
    csi::v1::CreateVolumeResponse source, restored;
    csi::v1::CreateSnapshotResponse snap;
    ASSERT_GRPC_OK(Create("pvc-o-" + n, 64 * kMiB, &source));
    const std::string data = Pattern('o', kMiB);
    {
      rbd_image_t img = nullptr;
      ASSERT_EQ(rbd_open(io_->get(), ImageOf(source.volume().volume_id()).c_str(), &img, nullptr), 0);
      EXPECT_EQ(rbd_write(img, 0, data.size(), data.data()), static_cast<ssize_t>(data.size()));
      rbd_close(img);
    }
    ASSERT_GRPC_OK(Snap("snap-o-" + n, source.volume().volume_id(), &snap));
    ASSERT_GRPC_OK(Create("pvc-r-" + n, 64 * kMiB, &restored, snap.snapshot().snapshot_id()));
    const std::string images[] = {ImageOf(source.volume().volume_id()),
                                  ImageOf(snap.snapshot().snapshot_id(), "csi-snap-"),
                                  ImageOf(restored.volume().volume_id())};
    bool deleted[3] = {false, false, false};
    for (int which : order) {
      if (which == 0) ASSERT_GRPC_OK(DeleteVolume(source.volume().volume_id()));
      if (which == 1) ASSERT_GRPC_OK(DeleteSnap(snap.snapshot().snapshot_id()));
      if (which == 2) ASSERT_GRPC_OK(DeleteVolume(restored.volume().volume_id()));
      deleted[which] = true;
      for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(ImageExists(*io_, images[i]), !deleted[i]) << images[i];
        if (!deleted[i]) {
          EXPECT_TRUE(ReadImage(*io_, images[i], 0, kMiB) == data) << images[i];
        }
      }
      // The snapshot, while it exists, still restores.
      if (!deleted[1]) {
        csi::v1::CreateVolumeResponse probe;
        ASSERT_GRPC_OK(Create("pvc-p-" + n + std::to_string(which), 64 * kMiB, &probe, snap.snapshot().snapshot_id()));
        EXPECT_TRUE(ReadImage(*io_, ImageOf(probe.volume().volume_id()), 0, kMiB) == data);
        ASSERT_GRPC_OK(DeleteVolume(probe.volume().volume_id()));
      }
    }
    EXPECT_TRUE(Trash(*io_).empty()) << "images left in the RBD trash";
  } while (std::next_permutation(order.begin(), order.end()));
}

}  // namespace
}  // namespace nbdk::vmtest
