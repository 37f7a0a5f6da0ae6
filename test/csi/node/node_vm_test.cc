// CSI Node service on the real kernel nbd driver, real rbd-nbd and a real
// Ceph cluster (runs in the test VM): stage -> publish -> IO -> unpublish ->
// unstage for ext4, xfs and block; idempotency; ABORTED; a failed stage
// leaves nothing behind; a ceph-csi-created volume stages from its ID alone;
// VolumeCondition while rbd-nbd is killed and healed.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "ceph/rados_cluster.h"
#include "journal/volume_id.h"
#include "test/csi/ceph_csi_layout.h"
#include "test/csi/node_vm_fixture.h"

namespace nbdk::vmtest {
namespace {

using Code = grpc::StatusCode;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteSynced(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ASSERT_EQ(::fsync(fd), 0);
  ::close(fd);
}

class NodeLifecycleTest : public NodeVmTest {
 protected:
  void RunFilesystem(const std::string& image, const std::string& fs, int mib = 64) {
    CreateImage(image, mib);
    auto cap = MountCap(fs);
    ASSERT_GRPC_OK(Stage(StageReq(image, cap)));
    std::string staged = StagingPath(image) + "/" + image;
    EXPECT_TRUE(IsMounted(staged));
    EXPECT_TRUE(std::filesystem::exists(StagingPath(image) + "/image-meta.json"));
    EXPECT_EQ(StatusField(image, "state"), "Connected");
    EXPECT_EQ(RbdNbdProcessesFor(image), 1);

    std::string t1 = TargetPath(image, 1), t2 = TargetPath(image, 2);
    ASSERT_GRPC_OK(Publish(image, t1, cap));
    ASSERT_GRPC_OK(Publish(image, t2, cap));
    WriteSynced(t1 + "/hello.txt", "written through " + t1 + "\n");
    EXPECT_EQ(ReadAll(t2 + "/hello.txt"), "written through " + t1 + "\n");

    grpc::Status st;
    auto stats = Stats(image, t1, &st);
    ASSERT_TRUE(st.ok()) << st.error_message();
    ASSERT_EQ(stats.usage_size(), 2);
    EXPECT_GT(stats.usage(0).total(), 30 << 20);
    EXPECT_FALSE(stats.volume_condition().abnormal()) << stats.volume_condition().message();

    grpc::Status busy = Unstage(image);
    EXPECT_EQ(busy.error_code(), Code::FAILED_PRECONDITION) << "still published";
    EXPECT_NE(busy.error_message().find(t1), std::string::npos) << busy.error_message();

    ASSERT_GRPC_OK(Unpublish(image, t1));
    ASSERT_GRPC_OK(Unpublish(image, t2));
    EXPECT_FALSE(IsMounted(t1));
    EXPECT_FALSE(std::filesystem::exists(t1));
    ASSERT_GRPC_OK(Unstage(image));
    EXPECT_FALSE(IsMounted(staged));
    EXPECT_FALSE(std::filesystem::exists(StagingPath(image) + "/image-meta.json"));
    EXPECT_EQ(StatusOf(image), "");
    EXPECT_EQ(RbdNbdProcessesFor(image), 0);
    EXPECT_TRUE(std::filesystem::is_empty(Root() + "/keys")) << "key file removed";

    // The data is on the image: stage again and read it back.
    ASSERT_GRPC_OK(Stage(StageReq(image, cap)));
    EXPECT_EQ(ReadAll(staged + "/hello.txt"), "written through " + t1 + "\n") << "not reformatted";
    ASSERT_GRPC_OK(Unstage(image));
  }
};

TEST_F(NodeLifecycleTest, Ext4) { RunFilesystem("vol-ext4", "ext4"); }

// mkfs.xfs (xfsprogs 6) refuses filesystems under 300 MiB.
TEST_F(NodeLifecycleTest, Xfs) { RunFilesystem("vol-xfs", "xfs", 320); }

TEST_F(NodeLifecycleTest, Block) {
  const std::string image = "vol-block";
  CreateImage(image);
  auto cap = BlockCap();
  ASSERT_GRPC_OK(Stage(StageReq(image, cap)));
  std::string target = TargetPath(image, 1);
  std::filesystem::create_directories(std::filesystem::path(target).parent_path());
  ASSERT_GRPC_OK(Publish(image, target, cap));
  // The target is the device: raw IO through it.
  std::string block(4096, 'b');
  int fd = ::open(target.c_str(), O_RDWR | O_DIRECT);
  ASSERT_GE(fd, 0);
  void* buf = nullptr;
  ASSERT_EQ(::posix_memalign(&buf, 4096, 4096), 0);
  std::memcpy(buf, block.data(), 4096);
  EXPECT_EQ(::pwrite(fd, buf, 4096, 8192), 4096);
  std::memset(buf, 0, 4096);
  EXPECT_EQ(::pread(fd, buf, 4096, 8192), 4096);
  EXPECT_EQ(std::string(static_cast<char*>(buf), 4096), block);
  ::free(buf);
  ::close(fd);
  grpc::Status st;
  auto stats = Stats(image, target, &st);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(stats.usage(0).total(), 64 << 20);
  ASSERT_GRPC_OK(Unpublish(image, target));
  ASSERT_GRPC_OK(Unstage(image));
  EXPECT_EQ(RbdNbdProcessesFor(image), 0);
}

TEST_F(NodeVmTest, RepeatsAreIdempotentAndConflictsAreNamed) {
  const std::string image = "vol-idem";
  CreateImage(image);
  auto cap = MountCap("ext4");
  ASSERT_GRPC_OK(Stage(StageReq(image, cap)));
  EXPECT_GRPC_OK(Stage(StageReq(image, cap)));
  EXPECT_EQ(Stage(StageReq(image, MountCap("xfs"))).error_code(), Code::ALREADY_EXISTS);
  std::string target = TargetPath(image, 1);
  ASSERT_GRPC_OK(Publish(image, target, cap));
  EXPECT_GRPC_OK(Publish(image, target, cap));
  EXPECT_EQ(Publish(image, target, cap, /*read_only=*/true).error_code(), Code::ALREADY_EXISTS);
  ASSERT_GRPC_OK(Unpublish(image, target));
  EXPECT_GRPC_OK(Unpublish(image, target));
  ASSERT_GRPC_OK(Unstage(image));
  EXPECT_GRPC_OK(Unstage(image));
  EXPECT_EQ(RbdNbdProcessesFor(image), 0);
}

TEST_F(NodeVmTest, ConcurrentCallOnOneVolumeIsAborted) {
  const std::string image = "vol-abort";
  CreateImage(image);
  auto req = StageReq(image, MountCap("ext4"));
  auto first = std::async(std::launch::async, [&] { return Stage(req); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // rbd-nbd map takes seconds
  grpc::Status second = Stage(req);
  EXPECT_EQ(second.error_code(), Code::ABORTED);
  EXPECT_NE(second.error_message().find("operation pending for volume " + image), std::string::npos);
  EXPECT_TRUE(first.get().ok());
  ASSERT_GRPC_OK(Unstage(image));
}

TEST_F(NodeVmTest, FailedStageLeavesNothingBehind) {
  const std::string image = "vol-badkey";
  CreateImage(image);
  auto req = StageReq(image, MountCap("ext4"));
  (*req.mutable_secrets())["userKey"] = "AQBjb2ZmZWVjb2ZmZWVjb2ZmZWVjb2ZmZWVjb2ZmZWU9PQ==";
  grpc::Status st = Stage(req);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.error_message().find("AQBjb2ZmZW"), std::string::npos) << "the key is never echoed";
  EXPECT_FALSE(IsMounted(StagingPath(image) + "/" + image));
  EXPECT_FALSE(std::filesystem::exists(StagingPath(image) + "/image-meta.json"));
  EXPECT_EQ(StatusOf(image), "");
  EXPECT_EQ(RbdNbdProcessesFor(image), 0);
  EXPECT_TRUE(std::filesystem::is_empty(Root() + "/keys"));
  // And the volume stages fine with the right key afterwards.
  ASSERT_GRPC_OK(Stage(StageReq(image, MountCap("ext4"))));
  ASSERT_GRPC_OK(Unstage(image));
}

TEST_F(NodeVmTest, CephCsiVolumeStagesFromItsIdAlone) {
  // Lay the volume out as ceph-csi's controller does: the per-volume omap
  // object with csi.imagename, and the image csi-vol-<uuid>.
  const std::string uuid = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
  RadosConfig rc{Ceph().conf, {}, Ceph().user, Ceph().keyfile, 30};
  auto cluster = RadosCluster::ConnectBlocking(rc);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  auto pool_id = (*cluster)->PoolId(Ceph().pool);
  ASSERT_TRUE(pool_id.ok()) << pool_id.status().ToString();
  auto io = IoCtx::Open(*cluster, Ceph().pool, "");
  ASSERT_TRUE(io.ok());
  const std::string image = "csi-vol-" + uuid;
  Status planted = PlantCephCsiVolume(*io, uuid, {{"csi.volname", "pvc-1234"}, {"csi.imagename", image}});
  ASSERT_TRUE(planted.ok()) << planted.ToString();
  CreateImage(image);
  std::string volume_id = EncodeVolumeId({1, "test", *pool_id, uuid});

  csi::v1::NodeStageVolumeRequest req = StageReq(image, MountCap("ext4"));
  req.set_volume_id(volume_id);
  req.set_staging_target_path(StagingPath(volume_id));
  std::filesystem::create_directories(StagingPath(volume_id));
  req.mutable_volume_context()->clear();
  (*req.mutable_volume_context())["clusterID"] = "test";
  ASSERT_GRPC_OK(Stage(req));
  EXPECT_NE(StatusField(volume_id, "image").find(image), std::string::npos) << StatusOf(volume_id);
  EXPECT_EQ(RbdNbdProcessesFor(image), 1);
  ASSERT_GRPC_OK(Unstage(volume_id));
  EXPECT_EQ(RbdNbdProcessesFor(image), 0);
}

TEST_F(NodeVmTest, VolumeConditionWhileRbdNbdIsKilledAndHealed) {
  const std::string image = "vol-heal";
  CreateImage(image);
  auto cap = MountCap("ext4");
  ASSERT_GRPC_OK(Stage(StageReq(image, cap)));
  std::string target = TargetPath(image, 1);
  ASSERT_GRPC_OK(Publish(image, target, cap));
  WriteSynced(target + "/before.txt", "before the kill\n");

  int pid = std::stoi(StatusField(image, "pid"));
  ASSERT_GT(pid, 0);
  auto killed_at = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  bool saw_abnormal = false, healed = false;
  std::string message;
  while (std::chrono::steady_clock::now() - killed_at < std::chrono::seconds(90)) {
    grpc::Status st;
    auto stats = Stats(image, target, &st);
    ASSERT_TRUE(st.ok()) << st.error_message();
    if (stats.volume_condition().abnormal()) {
      saw_abnormal = true;
      message = stats.volume_condition().message();
    } else if (saw_abnormal || StatusField(image, "restarts") == "1") {
      healed = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  double heal_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  std::printf("[ heal ] kill -9 -> VolumeCondition normal again: %.1f s (abnormal seen: %s, \"%s\")\n", heal_s,
              saw_abnormal ? "yes" : "no", message.c_str());
  EXPECT_TRUE(healed);
  EXPECT_EQ(StatusField(image, "state"), "Connected");
  EXPECT_EQ(StatusField(image, "restarts"), "1");
  EXPECT_NE(std::stoi(StatusField(image, "pid")), pid);
  // IO works and the data is intact after the heal.
  EXPECT_EQ(ReadAll(target + "/before.txt"), "before the kill\n");
  WriteSynced(target + "/after.txt", "after the heal\n");
  EXPECT_EQ(ReadAll(target + "/after.txt"), "after the heal\n");
  ASSERT_GRPC_OK(Unpublish(image, target));
  ASSERT_GRPC_OK(Unstage(image));
  EXPECT_EQ(RbdNbdProcessesFor(image), 0);
}

}  // namespace
}  // namespace nbdk::vmtest
