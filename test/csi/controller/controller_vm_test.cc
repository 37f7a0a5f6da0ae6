// CSI Controller service against the VM's real Ceph, through a real
// nbdkeeperd and gRPC: CreateVolume is idempotent by name and writes exactly
// ceph-csi's omap keys; the Node service stages the created volume from its
// ID (resolving the image through the omap journal); ControllerExpand grows
// the image, NodeExpand the nbd device and the filesystem; delete refuses
// while the image is mapped and afterwards leaves neither image nor omap keys;
// an image CreateVolume did not make is never adopted.
#include <rados/librados.h>
#include <rbd/librbd.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "ceph/rados_cluster.h"
#include "ceph/rbd_image.h"
#include "journal/volume_id.h"
#include "test/csi/controller/controller_vm_fixture.h"
#include "test/csi/controller/controller_vm_helpers.h"
#include "test/csi/controller/encrypted_volume_view.h"

namespace nbdk::vmtest {
namespace {

using Code = grpc::StatusCode;

// Key files the controller left in the daemon's key dir (named by the hex
// of "controller-<n>", csi/key_file.h).
int ControllerKeyFiles() {
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/run/nbdk-node-vm/keys", ec)) {
    if (e.path().filename().string().rfind("636f6e74726f6c6c65722d", 0) == 0) ++n;
  }
  return n;
}

TEST_F(ControllerVmTest, Capabilities) {
  grpc::ClientContext ctx;
  csi::v1::ControllerGetCapabilitiesResponse resp;
  ASSERT_GRPC_OK(controller_->ControllerGetCapabilities(&ctx, {}, &resp));
  std::set<int> types;
  for (const auto& c : resp.capabilities()) types.insert(c.rpc().type());
  using Rpc = csi::v1::ControllerServiceCapability::RPC;
  EXPECT_EQ(types, (std::set<int>{Rpc::CREATE_DELETE_VOLUME, Rpc::EXPAND_VOLUME, Rpc::CREATE_DELETE_SNAPSHOT,
                                  Rpc::LIST_SNAPSHOTS, Rpc::CLONE_VOLUME}));
}

TEST_F(ControllerVmTest, CreateStageExpandDeleteLifecycle) {
  const std::string name = "pvc-ctl-" + std::to_string(::getpid());

  // Create, then create again: one volume, one ID.
  csi::v1::CreateVolumeResponse created, again;
  ASSERT_GRPC_OK(Create(name, 64 * kMiB, &created));
  ASSERT_GRPC_OK(Create(name, 64 * kMiB, &again));
  const csi::v1::Volume& vol = created.volume();
  EXPECT_EQ(again.volume().volume_id(), vol.volume_id());
  EXPECT_EQ(vol.capacity_bytes(), 64 * kMiB);
  csi::v1::CreateVolumeResponse other;
  EXPECT_EQ(Create(name, 128 * kMiB, &other).error_code(), Code::ALREADY_EXISTS);

  auto id = DecodeVolumeId(vol.volume_id());
  ASSERT_TRUE(id.ok()) << vol.volume_id();
  EXPECT_EQ(id->cluster_id, "test");
  auto pool_id = io_->cluster().PoolId(Ceph().pool);
  ASSERT_TRUE(pool_id.ok());
  EXPECT_EQ(id->pool_id, *pool_id);
  const std::string image = "csi-vol-" + id->object_uuid;
  std::map<std::string, std::string> want_ctx = {
      {"clusterID", "test"}, {"pool", Ceph().pool}, {"imageName", image}, {"mounter", "rbd-nbd"}};
  std::map<std::string, std::string> ctx(vol.volume_context().begin(), vol.volume_context().end());
  EXPECT_EQ(ctx, want_ctx);

  // Exactly ceph-csi's omap keys.
  auto dir = AllOmap(*io_, "csi.volumes.default");
  ASSERT_TRUE(dir);
  EXPECT_EQ(dir->at("csi.volume." + name), id->object_uuid);
  auto per_volume = AllOmap(*io_, "csi.volume." + id->object_uuid);
  ASSERT_TRUE(per_volume);
  EXPECT_EQ(*per_volume, (std::map<std::string, std::string>{{"csi.volname", name}, {"csi.imagename", image}}));
  EXPECT_TRUE(ImageExists(*io_, image));

  csi::v1::ValidateVolumeCapabilitiesResponse valid;
  ASSERT_GRPC_OK(Validate(vol.volume_id(), &valid));
  EXPECT_TRUE(valid.has_confirmed()) << valid.message();

  // Stage from the ID and clusterID alone: the node resolves the image
  // through the omap journal this controller wrote.
  const std::string& volume_id = vol.volume_id();
  auto cap = MountCap("ext4");
  csi::v1::NodeStageVolumeRequest stage = StageReq(volume_id, cap);
  stage.mutable_volume_context()->clear();
  (*stage.mutable_volume_context())["clusterID"] = "test";
  (*stage.mutable_volume_context())["mounter"] = "rbd-nbd";
  ASSERT_GRPC_OK(Stage(stage));
  EXPECT_EQ(RbdNbdProcessesFor(image), 1);
  std::string target = TargetPath(volume_id, 1);
  ASSERT_GRPC_OK(Publish(volume_id, target, cap));
  { std::ofstream(target + "/hello.txt") << "hello\n"; }
  int64_t before = FilesystemBytes(target);
  EXPECT_GT(before, 0);
  EXPECT_LT(before, 64 * kMiB);

  // Expand: the controller grows the image, the node the filesystem.
  csi::v1::ControllerExpandVolumeResponse grown;
  ASSERT_GRPC_OK(Expand(volume_id, 128 * kMiB, cap, &grown));
  EXPECT_EQ(grown.capacity_bytes(), 128 * kMiB);
  EXPECT_TRUE(grown.node_expansion_required());
  // rbd-nbd 16 cannot grow the netlink-configured device itself (the kernel
  // wants the backend identifier it leaves out): the node does, then grows
  // the filesystem. Asking for more than the image holds changes nothing.
  const std::string device = StatusField(volume_id, "device");
  csi::v1::NodeExpandVolumeResponse expanded;
  grpc::Status too_big = NodeExpand(volume_id, target, 256 * kMiB, cap, &expanded);
  EXPECT_EQ(too_big.error_code(), Code::FAILED_PRECONDITION) << too_big.error_message();
  EXPECT_NE(too_big.error_message().find(std::to_string(128 * kMiB) + " bytes"), std::string::npos)
      << too_big.error_message();
  EXPECT_EQ(FilesystemBytes(target), before);
  ASSERT_GRPC_OK(NodeExpand(volume_id, target, 128 * kMiB, cap, &expanded));
  EXPECT_EQ(expanded.capacity_bytes(), 128 * kMiB);
  EXPECT_EQ(BlockDeviceBytes(device), 128 * kMiB) << device;
  EXPECT_GT(FilesystemBytes(target), 100 * kMiB) << "before: " << before;
  ASSERT_GRPC_OK(NodeExpand(volume_id, target, 128 * kMiB, cap, &expanded));  // again: nothing to do
  EXPECT_EQ(expanded.capacity_bytes(), 128 * kMiB);
  // The grown filesystem takes data beyond the old size, and the old file
  // reads back.
  {
    std::ofstream big(target + "/big.bin", std::ios::binary);
    std::string mib(kMiB, 'z');
    for (int i = 0; i < 80; ++i) big << mib;
    big.flush();
    EXPECT_TRUE(big.good());
  }
  ::sync();
  std::string hello;
  std::getline(std::ifstream(target + "/hello.txt"), hello);
  EXPECT_EQ(hello, "hello");
  EXPECT_EQ(std::filesystem::file_size(target + "/big.bin"), static_cast<uintmax_t>(80 * kMiB));

  // Mapped: delete refuses and deletes nothing.
  grpc::Status busy = Delete(volume_id);
  EXPECT_EQ(busy.error_code(), Code::FAILED_PRECONDITION) << busy.error_message();
  EXPECT_NE(busy.error_message().find("watcher"), std::string::npos) << busy.error_message();
  EXPECT_EQ(busy.error_message().find(Ceph().key), std::string::npos);
  EXPECT_TRUE(ImageExists(*io_, image));
  EXPECT_TRUE(AllOmap(*io_, "csi.volume." + id->object_uuid));

  ASSERT_GRPC_OK(Unpublish(volume_id, target));
  ASSERT_GRPC_OK(Unstage(volume_id));

  // Unmapped: delete removes the image and every key; a repeat is OK.
  ASSERT_GRPC_OK(Delete(volume_id));
  EXPECT_FALSE(ImageExists(*io_, image));
  EXPECT_FALSE(AllOmap(*io_, "csi.volume." + id->object_uuid));
  dir = AllOmap(*io_, "csi.volumes.default");
  EXPECT_TRUE(!dir || !dir->count("csi.volume." + name));
  ASSERT_GRPC_OK(Delete(volume_id));
  EXPECT_EQ(Validate(volume_id, &valid).error_code(), Code::NOT_FOUND);
  ASSERT_GRPC_OK(Delete("not-a-ceph-csi-volume-id"));

  // The name is free again: a new create gets a new volume.
  csi::v1::CreateVolumeResponse recreated;
  ASSERT_GRPC_OK(Create(name, 64 * kMiB, &recreated));
  EXPECT_NE(recreated.volume().volume_id(), volume_id);
  ASSERT_GRPC_OK(Delete(recreated.volume().volume_id()));
}

// CreateVolume never adopts an image it did not make (csi/controller/volume_claim.h):
// neither an operator's `rbd create` nor another volume's image. Either is
// ALREADY_EXISTS naming it, and its size, data and omap keys stay as they
// were.
TEST_F(ControllerVmTest, CreateVolumeNeverAdoptsAnImageItDidNotCreate) {
  const std::string pid = std::to_string(::getpid());
  const std::string premade = "ctl-premade-" + pid, name = "pvc-adopt-" + pid;
  int order = 0;
  ASSERT_EQ(rbd_create(io_->get(), premade.c_str(), 32 * kMiB, &order), 0);
  ASSERT_TRUE(WriteImage(*io_, premade, 0, "the operator's data"));
  using Keys = std::map<std::string, std::string>;
  auto directory_keys = [this] { return AllOmap(*io_, "csi.volumes.default").value_or(Keys{}); };
  const Keys keys_before = directory_keys();

  csi::v1::CreateVolumeResponse resp;
  grpc::Status s = Create(name, 64 * kMiB, &resp, premade);
  EXPECT_EQ(s.error_code(), Code::ALREADY_EXISTS) << s.error_message();
  EXPECT_NE(s.error_message().find("image " + premade), std::string::npos) << s.error_message();
  auto size = ImageSize(*io_, premade);
  ASSERT_TRUE(size.ok() && *size) << size.status().ToString();
  EXPECT_EQ(**size, uint64_t(32 * kMiB)) << "the image was resized";
  EXPECT_EQ(ReadImage(*io_, premade, 0, 19), "the operator's data");
  EXPECT_EQ(directory_keys(), keys_before) << "an omap key was written";

  // Another volume's image: the second name is refused, the first keeps its
  // image, its data and its ID.
  const std::string owner = name + "-owner", image = "ctl-owned-" + pid;
  csi::v1::CreateVolumeResponse owned, again;
  ASSERT_GRPC_OK(Create(owner, 64 * kMiB, &owned, image));
  ASSERT_TRUE(WriteImage(*io_, image, 0, "the owner's data"));
  const Keys keys_owned = directory_keys();
  s = Create(name, 64 * kMiB, &resp, image);
  EXPECT_EQ(s.error_code(), Code::ALREADY_EXISTS) << s.error_message();
  EXPECT_NE(s.error_message().find("image " + image), std::string::npos) << s.error_message();
  EXPECT_EQ(ReadImage(*io_, image, 0, 16), "the owner's data");
  EXPECT_EQ(directory_keys(), keys_owned);
  ASSERT_GRPC_OK(Create(owner, 64 * kMiB, &again, image));
  EXPECT_EQ(again.volume().volume_id(), owned.volume().volume_id());

  // Deleting it leaves an image named like its temporary clone, which only
  // a clone of a volume has.
  const std::string neighbour = image + "-temp";
  ASSERT_EQ(rbd_create(io_->get(), neighbour.c_str(), 16 * kMiB, &order), 0);
  ASSERT_GRPC_OK(Delete(owned.volume().volume_id()));
  EXPECT_FALSE(ImageExists(*io_, image));
  EXPECT_TRUE(ImageExists(*io_, neighbour)) << "DeleteVolume removed another image";
  EXPECT_TRUE(ImageExists(*io_, premade));
  EXPECT_EQ(rbd_remove(io_->get(), neighbour.c_str()), 0);
  EXPECT_EQ(rbd_remove(io_->get(), premade.c_str()), 0);
}

TEST_F(ControllerVmTest, ErrorsNameTheFieldAndNeverTheKey) {
  csi::v1::CreateVolumeRequest req;
  req.set_name("pvc-bad");
  *req.add_volume_capabilities() = MountCap("ext4");
  (*req.mutable_parameters())["clusterID"] = "test";
  (*req.mutable_parameters())["pool"] = Ceph().pool;
  (*req.mutable_parameters())["imageFeatures"] = "layering,bogus";
  Secrets(&req);
  grpc::ClientContext ctx;
  csi::v1::CreateVolumeResponse resp;
  grpc::Status s = controller_->CreateVolume(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), Code::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("imageFeatures"), std::string::npos) << s.error_message();
  EXPECT_EQ(s.error_message().find(Ceph().key), std::string::npos);

  (*req.mutable_parameters())["imageFeatures"] = "layering";
  (*req.mutable_parameters())["clusterID"] = "no-such-cluster";
  grpc::ClientContext ctx2;
  s = controller_->CreateVolume(&ctx2, req, &resp);
  // The node's configuration lacks the cluster: never NOT_FOUND ("no such volume").
  EXPECT_EQ(s.error_code(), Code::FAILED_PRECONDITION) << s.error_message();
  EXPECT_NE(s.error_message().find("no-such-cluster"), std::string::npos) << s.error_message();
  EXPECT_EQ(ControllerKeyFiles(), 0) << "the key file is removed after every call, failed or not";
}

}  // namespace
}  // namespace nbdk::vmtest
