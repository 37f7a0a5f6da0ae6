// Bad input on the real kernel and Ceph (runs in the test VM, sharing the
// Node VM tests' daemon): a device holding only a partition table is never
// formatted, a device that cannot be read is never blank, one image is never
// mapped twice, an unstage at the wrong path leaves the mounted volume alone,
// and a device a process has open is not unmapped under it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "ceph/rados_cluster.h"
#include "csi/node/filesystem.h"
#include "journal/volume_id.h"
#include "test/common/vm_command.h"
#include "test/csi/node_vm_fixture.h"

namespace nbdk::vmtest {
namespace {

using Code = grpc::StatusCode;

constexpr off_t kMarkerOffset = 4 << 20;
constexpr char kMarker[] = "nbdkeeper: data behind a partition table";

// A DOS partition table (one Linux partition from LBA 2048) and a marker.
void WritePartitionTableAndMarker(const std::string& device) {
  int fd = ::open(device.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0) << device << ": " << std::strerror(errno);
  unsigned char mbr[512] = {};
  const unsigned char entry[16] = {0x00, 0, 0, 0, 0x83, 0, 0, 0, 0x00, 0x08, 0, 0, 0x00, 0x10, 0x01, 0};
  std::memcpy(mbr + 446, entry, sizeof(entry));
  mbr[510] = 0x55;
  mbr[511] = 0xaa;
  ASSERT_EQ(::pwrite(fd, mbr, sizeof(mbr), 0), 512);
  ASSERT_EQ(::pwrite(fd, kMarker, sizeof(kMarker), kMarkerOffset), static_cast<ssize_t>(sizeof(kMarker)));
  ASSERT_EQ(::fsync(fd), 0);
  ::close(fd);
}

void ExpectPartitionTableAndMarker(const std::string& device) {
  int fd = ::open(device.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << device;
  unsigned char mbr[512] = {};
  char marker[sizeof(kMarker)] = {};
  ASSERT_EQ(::pread(fd, mbr, sizeof(mbr), 0), 512);
  ASSERT_EQ(::pread(fd, marker, sizeof(marker), kMarkerOffset), static_cast<ssize_t>(sizeof(marker)));
  ::close(fd);
  EXPECT_EQ(mbr[510], 0x55);
  EXPECT_EQ(mbr[511], 0xaa);
  EXPECT_EQ(mbr[450], 0x83) << "partition entry";
  EXPECT_STREQ(marker, kMarker);
}

// `blkid -p` exits 2 both for "nothing found" and for "could not read", and
// a stage that took the second for the first formatted over data it could
// not see. device-mapper's error target fails every read: of the whole
// device, and past a readable head (where blkid's superblock probes look).
TEST(UnreadableDeviceVmTest, IsAnErrorNeverBlank) {
  struct Case {
    std::string name, table;
  };
  const std::string table_file = ::testing::TempDir() + "/dm-table";
  for (const Case& c :
       {Case{"nbdk-probe-error", "0 8192 error\n"}, Case{"nbdk-probe-tail-error", "0 4096 zero\n4096 4096 error\n"}}) {
    std::ofstream(table_file) << c.table;
    auto made = RunCommand({"dmsetup", "create", c.name}, true, table_file);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    ASSERT_EQ(made->exit.code, 0) << made->stdout_text;
    // Without udev (the test VM), dmsetup leaves the node to be made.
    auto nodes = RunCommand({"dmsetup", "mknodes", c.name}, true);
    ASSERT_TRUE(nodes.ok() && nodes->exit.code == 0) << (nodes.ok() ? nodes->stdout_text : nodes.status().ToString());
    const std::string device = "/dev/mapper/" + c.name;
    struct stat st {};
    ASSERT_EQ(::stat(device.c_str(), &st), 0) << device << ": " << std::strerror(errno);
    ASSERT_TRUE(S_ISBLK(st.st_mode)) << device;
    auto blkid = RunCommand({"blkid", "-p", device}, true);
    if (blkid.ok())
      std::printf("blkid -p %s: exit %d (2 reads as \"nothing found\")\n", device.c_str(), blkid->exit.code);
    auto probed = ProbeDeviceSignature(device);
    ASSERT_FALSE(probed.ok()) << device << " probed as " << probed->Describe();
    std::printf("%s\n", probed.status().ToString().c_str());
    EXPECT_EQ(probed.status().code(), nbdk::Code::kIoError) << probed.status().ToString();
    EXPECT_NE(probed.status().message().find("cannot read " + device), std::string::npos) << probed.status().ToString();
    auto removed = RunCommand({"dmsetup", "remove", c.name}, true);
    EXPECT_TRUE(removed.ok() && removed->exit.code == 0) << c.name;
  }
}

TEST_F(NodeVmTest, AnImageHoldingOnlyAPartitionTableIsNeverFormatted) {
  const std::string image = "vol-parttable";
  CreateImage(image);
  std::string target = TargetPath(image, 1);
  ASSERT_GRPC_OK(Stage(StageReq(image, BlockCap())));
  ASSERT_GRPC_OK(Publish(image, target, BlockCap()));
  WritePartitionTableAndMarker(target);
  ASSERT_GRPC_OK(Unpublish(image, target));
  ASSERT_GRPC_OK(Unstage(image));

  grpc::Status refused = Stage(StageReq(image, MountCap("ext4")));
  EXPECT_EQ(refused.error_code(), Code::FAILED_PRECONDITION) << refused.error_message();
  EXPECT_NE(refused.error_message().find("dos partition table"), std::string::npos) << refused.error_message();
  EXPECT_FALSE(IsMounted(StagingPath(image) + "/" + image));
  EXPECT_EQ(RbdNbdProcessesFor(image), 0) << "the failed stage unmapped";

  ASSERT_GRPC_OK(Stage(StageReq(image, BlockCap())));
  ASSERT_GRPC_OK(Publish(image, target, BlockCap()));
  ExpectPartitionTableAndMarker(target);
  ASSERT_GRPC_OK(Unpublish(image, target));
  ASSERT_GRPC_OK(Unstage(image));
}

TEST_F(NodeVmTest, ASecondVolumeIdForAMappedImageIsRefused) {
  const std::string image = "vol-double";
  CreateImage(image);
  ASSERT_GRPC_OK(Stage(StageReq(image, MountCap("ext4"))));

  RadosConfig rc{Ceph().conf, {}, Ceph().user, Ceph().keyfile, 30};
  auto cluster = RadosCluster::ConnectBlocking(rc);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  auto pool_id = (*cluster)->PoolId(Ceph().pool);
  ASSERT_TRUE(pool_id.ok()) << pool_id.status().ToString();
  // A ceph-csi volume ID whose volume context names the same image.
  std::string other = EncodeVolumeId({1, "test", *pool_id, "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"});
  csi::v1::NodeStageVolumeRequest req = StageReq(image, MountCap("ext4"));
  req.set_volume_id(other);
  req.set_staging_target_path(StagingPath(other));
  std::filesystem::create_directories(StagingPath(other));
  req.mutable_volume_context()->clear();
  (*req.mutable_volume_context())["clusterID"] = "test";
  (*req.mutable_volume_context())["imageName"] = image;
  grpc::Status second = Stage(req);
  EXPECT_EQ(second.error_code(), Code::FAILED_PRECONDITION) << second.error_message();
  EXPECT_NE(second.error_message().find("already staged on this node as volume " + image), std::string::npos)
      << second.error_message();
  EXPECT_EQ(RbdNbdProcessesFor(image), 1);
  EXPECT_EQ(StatusOf(other), "");
  ASSERT_GRPC_OK(Unstage(image));
}

TEST_F(NodeVmTest, UnstageAtAnotherPathLeavesTheMountedVolumeAlone) {
  const std::string image = "vol-mismatch";
  CreateImage(image);
  ASSERT_GRPC_OK(Stage(StageReq(image, MountCap("ext4"))));
  std::string elsewhere = Root() + "/staging/elsewhere";
  std::filesystem::create_directories(elsewhere);
  csi::v1::NodeUnstageVolumeRequest req;
  req.set_volume_id(image);
  req.set_staging_target_path(elsewhere);
  grpc::ClientContext ctx;
  csi::v1::NodeUnstageVolumeResponse resp;
  grpc::Status st = Node()->NodeUnstageVolume(&ctx, req, &resp);
  EXPECT_EQ(st.error_code(), Code::FAILED_PRECONDITION) << st.error_message();
  EXPECT_NE(st.error_message().find(StagingPath(image)), std::string::npos) << st.error_message();
  EXPECT_NE(st.error_message().find(elsewhere), std::string::npos) << st.error_message();
  EXPECT_TRUE(IsMounted(StagingPath(image) + "/" + image)) << "still mounted";
  EXPECT_EQ(RbdNbdProcessesFor(image), 1) << "still mapped";
  EXPECT_EQ(StatusField(image, "state"), "Connected");
  ASSERT_GRPC_OK(Unstage(image));
  EXPECT_EQ(RbdNbdProcessesFor(image), 0);
}

// rbd-nbd unmap fails the IO in flight of whoever has the device open (a
// VM's qemu, dd on a block volume): the unstage names the opener instead, and
// goes on once it has closed the device.
TEST_F(NodeVmTest, UnstageOfADeviceAProcessHasOpenNamesItAndKeepsTheDevice) {
  const std::string image = "vol-opener";
  CreateImage(image);
  std::string target = TargetPath(image, 1);
  ASSERT_GRPC_OK(Stage(StageReq(image, BlockCap())));
  ASSERT_GRPC_OK(Publish(image, target, BlockCap()));
  ASSERT_GRPC_OK(Unpublish(image, target));
  const std::string device = StatusField(image, "device");
  int fd = ::open(device.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << device << ": " << std::strerror(errno);

  grpc::Status refused = Unstage(image);
  EXPECT_EQ(refused.error_code(), Code::FAILED_PRECONDITION) << refused.error_message();
  EXPECT_NE(refused.error_message().find("is open by pid " + std::to_string(::getpid())), std::string::npos)
      << refused.error_message();
  EXPECT_EQ(RbdNbdProcessesFor(image), 1) << "still mapped";
  char byte = 0;
  EXPECT_EQ(::pread(fd, &byte, 1, 0), 1) << "the opener still reads: " << std::strerror(errno);
  ::close(fd);
  ASSERT_GRPC_OK(Unstage(image));
  EXPECT_EQ(RbdNbdProcessesFor(image), 0);
}

}  // namespace
}  // namespace nbdk::vmtest
