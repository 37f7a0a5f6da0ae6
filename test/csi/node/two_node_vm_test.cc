// One writer per volume across nodes (supervisor/image_fence.h), on the
// real kernel and Ceph: two nbdkeeperd daemons with their own node IDs,
// roots and Ceph clients stand in for two nodes of one cluster.
#include <fcntl.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "ceph/rados_cluster.h"
#include "journal/volume_id.h"
#include "test/common/vm_command.h"
#include "test/csi/node_vm_fixture.h"

namespace nbdk::vmtest {
namespace {

using Clock = std::chrono::steady_clock;
using Code = grpc::StatusCode;
using Mode = csi::v1::VolumeCapability::AccessMode;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A 4 KiB block holding `text`, written O_DIRECT|O_DSYNC, its file and
// directory synced: on the OSDs when this returns.
void WriteMarker(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_DIRECT | O_DSYNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
  void* buf = nullptr;
  ASSERT_EQ(posix_memalign(&buf, 4096, 4096), 0);
  std::memset(buf, 0, 4096);
  std::memcpy(buf, text.data(), std::min<size_t>(text.size(), 4095));
  EXPECT_EQ(::pwrite(fd, buf, 4096, 0), 4096) << path << ": " << std::strerror(errno);
  EXPECT_EQ(::fsync(fd), 0);
  std::free(buf);
  ::close(fd);
  int dir = ::open(std::filesystem::path(path).parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dir, 0);
  EXPECT_EQ(::fsync(dir), 0);
  ::close(dir);
}

std::string ReadMarker(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) return "open " + path + ": " + std::strerror(errno);
  void* buf = nullptr;
  if (posix_memalign(&buf, 4096, 4096) != 0) return "no memory";
  ssize_t n = ::pread(fd, buf, 4096, 0);
  std::string text = n == 4096 ? std::string(static_cast<const char*>(buf)) : "short read";
  std::free(buf);
  ::close(fd);
  return text;
}

// The volume's own Ceph clients in `node`'s /status.
std::vector<std::string> OwnClients(const VmNode& node, const std::string& volume_id) {
  rapidjson::Document doc;
  doc.Parse(node.StatusOf(volume_id).c_str());
  std::vector<std::string> out;
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("own_clients")) return out;
  for (const auto& c : doc["own_clients"].GetArray()) out.push_back(c.GetString());
  return out;
}

class TwoNodeVmTest : public ::testing::Test {
 public:
  // A node an earlier test left dead (a failed takeover) is started again.
  void SetUp() override {
    for (VmNode* n : {a_.get(), b_.get()}) {
      std::string error;
      if (!n->stub()) {
        ASSERT_TRUE(n->Start(false, {"--reattach-timeout=120"}, &error)) << error;
      }
    }
  }
  static void SetUpTestSuite() {
    std::string error;
    // A's window outlasts B's wait for A's dead watch (30 s), so that A's
    // restart after it finds the device still waiting for a re-attach.
    ASSERT_TRUE(a_->Start(true, {"--reattach-timeout=120"}, &error)) << error;
    ASSERT_TRUE(b_->Start(true, {"--reattach-timeout=60"}, &error)) << error;
  }
  static void TearDownTestSuite() {
    for (VmNode* n : {a_.get(), b_.get()}) {
      int st = n->Stop();
      EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << n->node_id() << " exit";
      if (::testing::UnitTest::GetInstance()->failed_test_count() > 0) {
        std::fprintf(stderr, "--- %s log ---\n%s\n", n->node_id().c_str(), n->daemon().Log().c_str());
      }
    }
  }

 protected:
  static void CreateImage(const std::string& name, int mib = 64) {
    std::string error;
    ASSERT_TRUE(CreateTestImage(name, mib, &error)) << error;
  }
  static std::string Mounted(const VmNode& n, const std::string& id) { return n.StagingPath(id) + "/" + id; }

  static std::unique_ptr<VmNode> a_, b_;
};

std::unique_ptr<VmNode> TwoNodeVmTest::a_ = std::make_unique<VmNode>("/run/nbdk-node-a", "node-a");
std::unique_ptr<VmNode> TwoNodeVmTest::b_ = std::make_unique<VmNode>("/run/nbdk-node-b", "node-b");

TEST_F(TwoNodeVmTest, ASingleWriterVolumeOnOneNodeIsRefusedOnTheOtherUntilUnstaged) {
  const std::string id = "two-rwo";
  CreateImage(id);
  ASSERT_GRPC_OK(a_->Stage(a_->StageReq(id, MountCapability("ext4"))));
  std::vector<std::string> held_by = OwnClients(*a_, id);
  ASSERT_EQ(held_by.size(), 1u) << a_->StatusOf(id);

  grpc::Status refused = b_->Stage(b_->StageReq(id, MountCapability("ext4")));
  EXPECT_EQ(refused.error_code(), Code::FAILED_PRECONDITION) << refused.error_message();
  EXPECT_NE(refused.error_message().find("is in use by another client: watcher"), std::string::npos)
      << refused.error_message();
  EXPECT_NE(refused.error_message().find(held_by[0]), std::string::npos) << refused.error_message();
  EXPECT_EQ(RbdNbdProcessesFor(id), 1) << "B mapped nothing";
  EXPECT_FALSE(IsMounted(Mounted(*b_, id)));
  EXPECT_EQ(b_->StatusOf(id), "");

  ASSERT_GRPC_OK(a_->Unstage(id));
  ASSERT_GRPC_OK(b_->Stage(b_->StageReq(id, MountCapability("ext4"))));
  EXPECT_TRUE(IsMounted(Mounted(*b_, id)));
  ASSERT_GRPC_OK(b_->Unstage(id));
}

// Review finding A1: a node whose map is slow (its rbd-nbd starts 3 s late,
// a wrapper) and another node that stages the same single-writer image
// inside that window. Both pass the check before their map; the lock that
// --exclusive takes and the listing after each map must leave one winner at
// most: never both staged, never two rbd-nbd serving the image.
TEST_F(TwoNodeVmTest, TwoNodesStagingOneSingleWriterImageAtOnceNeverBothWin) {
  const std::string id = "two-race";
  CreateImage(id);
  const std::string wrapper = "/run/nbdk-slow-rbd-nbd";
  {
    std::ofstream out(wrapper);
    out << "#!/bin/sh\nsleep 3\nexec rbd-nbd \"$@\"\n";
  }
  std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
  VmNode slow("/run/nbdk-node-slow", "node-slow");
  std::string error;
  ASSERT_TRUE(slow.Start(true, {"--reattach-timeout=60", "--rbd-nbd=" + wrapper}, &error)) << error;
  auto cap = MountCapability("ext4");
  grpc::Status slow_staged;
  std::thread slow_stage([&] { slow_staged = slow.Stage(slow.StageReq(id, cap)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  grpc::Status b_staged = b_->Stage(b_->StageReq(id, cap));
  slow_stage.join();
  std::printf("race: slow node %s, B %s\n", slow_staged.error_message().c_str(), b_staged.error_message().c_str());
  EXPECT_FALSE(slow_staged.ok() && b_staged.ok()) << "both nodes staged one single-writer image";
  EXPECT_LE(RbdNbdProcessesFor(id), 1);
  EXPECT_LE(IsMounted(Mounted(slow, id)) + IsMounted(Mounted(*b_, id)), 1);
  for (const grpc::Status& lost : {slow_staged, b_staged}) {
    if (!lost.ok()) EXPECT_EQ(lost.error_code(), Code::FAILED_PRECONDITION) << lost.error_message();
  }
  if (slow_staged.ok()) EXPECT_GRPC_OK(slow.Unstage(id));
  if (b_staged.ok()) EXPECT_GRPC_OK(b_->Unstage(id));
  int st = slow.Stop();
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "node-slow exit";
}

TEST_F(TwoNodeVmTest, AMultiWriterBlockVolumeStagesOnBothNodes) {
  const std::string id = "two-rwx-block";
  CreateImage(id);
  auto cap = BlockCapability(Mode::MULTI_NODE_MULTI_WRITER);
  ASSERT_GRPC_OK(a_->Stage(a_->StageReq(id, cap)));
  ASSERT_GRPC_OK(b_->Stage(b_->StageReq(id, cap)));
  EXPECT_EQ(RbdNbdProcessesFor(id), 2);
  ASSERT_GRPC_OK(b_->Unstage(id));
  ASSERT_GRPC_OK(a_->Unstage(id));
}

TEST_F(TwoNodeVmTest, AReaderOnlyVolumeStagesReadOnlyOnBothNodes) {
  const std::string id = "two-rox";
  CreateImage(id);
  auto cap = BlockCapability(Mode::MULTI_NODE_READER_ONLY);
  ASSERT_GRPC_OK(a_->Stage(a_->StageReq(id, cap)));
  ASSERT_GRPC_OK(b_->Stage(b_->StageReq(id, cap)));
  for (VmNode* n : {a_.get(), b_.get()}) {
    std::string device = n->StatusField(id, "device");
    ASSERT_FALSE(device.empty()) << n->StatusOf(id);
    std::string sys = "/sys/block/" + device.substr(device.rfind('/') + 1) + "/ro";
    auto ro = RunCommand({"cat", sys});
    ASSERT_TRUE(ro.ok());
    EXPECT_EQ(ro->stdout_text.substr(0, 1), "1") << n->node_id() << " " << device << " is not read-only";
    // The kernel lets a read-only device be opened for writing; the write
    // itself is refused.
    int fd = ::open(device.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);
    if (fd >= 0) {
      void* buf = nullptr;
      ASSERT_EQ(posix_memalign(&buf, 4096, 4096), 0);
      std::memset(buf, 0xab, 4096);
      EXPECT_LT(::pwrite(fd, buf, 4096, 0), 0) << n->node_id() << " wrote to " << device;
      std::free(buf);
      ::close(fd);
    }
  }
  ASSERT_GRPC_OK(a_->Unstage(id));
  ASSERT_GRPC_OK(b_->Unstage(id));
}

// Node A dies (its daemon and rbd-nbd SIGKILLed, its mount left behind):
// B may stage the volume once A's watch expired, and A, restarted, never
// re-attaches it.
TEST_F(TwoNodeVmTest, ADeadNodesVolumeGoesToTheOtherAndTheDeadNodeStaysFenced) {
  const std::string id = "two-takeover";
  CreateImage(id);
  auto cap = MountCapability("ext4");
  ASSERT_GRPC_OK(a_->Stage(a_->StageReq(id, cap)));
  WriteMarker(Mounted(*a_, id) + "/a.dat", "written on A before it died");
  std::vector<std::string> a_clients = OwnClients(*a_, id);
  ASSERT_EQ(a_clients.size(), 1u);

  const Clock::time_point died = Clock::now();
  a_->Kill();
  std::printf("takeover: A (daemon and rbd-nbd) SIGKILLed at 0.0 s\n");

  // B is refused while A's dead client still watches the image.
  grpc::Status first = b_->Stage(b_->StageReq(id, cap));
  ASSERT_EQ(first.error_code(), Code::FAILED_PRECONDITION) << first.error_message();
  EXPECT_NE(first.error_message().find(a_clients[0]), std::string::npos) << first.error_message();
  std::printf("takeover: B's first stage refused at %.1f s: %s\n", Since(died), first.error_message().c_str());
  int refusals = 1;
  grpc::Status staged = first;
  while (!staged.ok() && Since(died) < 90) {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    staged = b_->Stage(b_->StageReq(id, cap));
    if (!staged.ok()) {
      ASSERT_EQ(staged.error_code(), Code::FAILED_PRECONDITION) << staged.error_message();
      ++refusals;
    }
  }
  ASSERT_GRPC_OK(staged);
  const double b_staged_s = Since(died);
  std::printf("takeover: B staged at %.1f s after %d refusals (A's watch expired)\n", b_staged_s, refusals);
  std::vector<std::string> b_clients = OwnClients(*b_, id);
  ASSERT_EQ(b_clients.size(), 1u);

  // B reads A's data and writes its own, without an IO error.
  EXPECT_EQ(ReadMarker(Mounted(*b_, id) + "/a.dat"), "written on A before it died");
  WriteMarker(Mounted(*b_, id) + "/b.dat", "written on B after the takeover");
  Result<std::unique_ptr<Writer>> writer = Writer::Start(Mounted(*b_, id) + "/b-writer.dat");
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();

  // A comes back inside its reattach window: it finds its device still
  // waiting, and B's client on the image.
  std::string error;
  ASSERT_TRUE(a_->Start(false, {"--reattach-timeout=120"}, &error)) << error;
  std::printf("takeover: A restarted and ready at %.1f s\n", Since(died));
  Clock::time_point wait = Clock::now();
  while (a_->StatusField(id, "state") != "Fenced" && Since(wait) < 60) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_EQ(a_->StatusField(id, "state"), "Fenced") << a_->StatusOf(id);
  std::string reason = a_->StatusField(id, "reason");
  EXPECT_NE(reason.find(b_clients[0]), std::string::npos) << reason;
  std::printf("takeover: A reports Fenced at %.1f s: %s\n", Since(died), reason.c_str());
  grpc::Status stats_status;
  auto stats = a_->Stats(id, Mounted(*a_, id), &stats_status);
  ASSERT_TRUE(stats_status.ok()) << stats_status.error_message();
  EXPECT_TRUE(stats.volume_condition().abnormal());
  EXPECT_NE(stats.volume_condition().message().find(b_clients[0]), std::string::npos)
      << stats.volume_condition().message();
  EXPECT_EQ(RbdNbdProcessesFor(id), 1) << "A started an rbd-nbd for B's image";

  // A's unstage cleans its side up (its dead device fails the unmount's IO
  // at the kernel's deadline) and leaves B alone.
  Clock::time_point unstage = Clock::now();
  EXPECT_GRPC_OK(a_->Unstage(id));
  std::printf("takeover: A unstaged in %.1f s, at %.1f s\n", Since(unstage), Since(died));
  EXPECT_EQ(a_->StatusOf(id), "");
  EXPECT_FALSE(IsMounted(Mounted(*a_, id)));

  (*writer)->Stop();
  EXPECT_EQ((*writer)->errors(), 0u);
  EXPECT_GT((*writer)->writes(), 0u);
  std::printf("takeover: B's writer: %llu writes, %llu IO errors, longest %.2f s\n",
              static_cast<unsigned long long>((*writer)->writes()),
              static_cast<unsigned long long>((*writer)->errors()), (*writer)->longest_s());
  EXPECT_EQ(ReadMarker(Mounted(*b_, id) + "/b.dat"), "written on B after the takeover");
  EXPECT_EQ(ReadMarker(Mounted(*b_, id) + "/a.dat"), "written on A before it died");
  ASSERT_GRPC_OK(b_->Unstage(id));

  // The filesystem both nodes had is clean.
  const std::string copy = "/run/nbdk-two-takeover.img";
  std::filesystem::remove(copy);
  auto exported = RunCommand(Ceph().Rbd({"export", "--no-progress", Ceph().pool + "/" + id, copy}), true);
  ASSERT_TRUE(exported.ok() && exported->exit.code == 0) << (exported.ok() ? exported->stdout_text : "");
  auto fsck = RunCommand({"e2fsck", "-fn", copy}, true);
  ASSERT_TRUE(fsck.ok());
  EXPECT_EQ(fsck->exit.code, 0) << fsck->stdout_text;
  std::filesystem::remove(copy);
}

// Two volume IDs naming one image (a static volume and a ceph-csi volume ID
// with its imageName), staged at the same instant: one maps it, the other
// is refused FAILED_PRECONDITION; over two connections and over one.
TEST_F(TwoNodeVmTest, TwoVolumeIdsOfOneImageStagedAtOnceMapItOnce) {
  const std::string image = "two-ids";
  CreateImage(image);
  RadosConfig rc{Ceph().conf, {}, Ceph().user, Ceph().keyfile, 30};
  auto cluster = RadosCluster::ConnectBlocking(rc);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  auto pool_id = (*cluster)->PoolId(Ceph().pool);
  ASSERT_TRUE(pool_id.ok()) << pool_id.status().ToString();
  const std::string other = EncodeVolumeId({1, "test", *pool_id, "aaaaaaaa-bbbb-cccc-dddd-000000000001"});
  auto cap = MountCapability("ext4");
  csi::v1::NodeStageVolumeRequest by_name = a_->StageReq(image, cap);
  csi::v1::NodeStageVolumeRequest by_id = a_->StageReq(image, cap);
  by_id.set_volume_id(other);
  by_id.set_staging_target_path(a_->StagingPath(other));
  std::filesystem::create_directories(a_->StagingPath(other));
  by_id.mutable_volume_context()->clear();
  (*by_id.mutable_volume_context())["clusterID"] = "test";
  (*by_id.mutable_volume_context())["imageName"] = image;

  auto second_channel =
      csi::v1::Node::NewStub(grpc::CreateChannel(a_->daemon().endpoint(), grpc::InsecureChannelCredentials()));
  for (int round = 0; round < 8; ++round) {
    csi::v1::Node::Stub& one = *a_->stub();
    csi::v1::Node::Stub& two = round < 4 ? *second_channel : *a_->stub();
    grpc::Status got[2];
    auto stage = [&got](csi::v1::Node::Stub* stub, const csi::v1::NodeStageVolumeRequest* req, int i) {
      grpc::ClientContext ctx;
      csi::v1::NodeStageVolumeResponse resp;
      got[i] = stub->NodeStageVolume(&ctx, *req, &resp);
    };
    std::thread first(stage, &one, &by_name, 0), second(stage, &two, &by_id, 1);
    first.join();
    second.join();
    int ok = (got[0].ok() ? 1 : 0) + (got[1].ok() ? 1 : 0);
    ASSERT_EQ(ok, 1) << "round " << round << ": " << got[0].error_message() << " / " << got[1].error_message();
    const grpc::Status& refused = got[0].ok() ? got[1] : got[0];
    EXPECT_EQ(refused.error_code(), Code::FAILED_PRECONDITION) << "round " << round << ": " << refused.error_message();
    EXPECT_EQ(RbdNbdProcessesFor(image), 1) << "round " << round;
    std::printf("race round %d (%s): %s won; the other: %s\n", round, round < 4 ? "two connections" : "one connection",
                got[0].ok() ? "the static ID" : "the ceph-csi ID", refused.error_message().c_str());
    ASSERT_GRPC_OK(a_->Unstage(got[0].ok() ? image : other));
    EXPECT_EQ(RbdNbdProcessesFor(image), 0);
  }
}

}  // namespace
}  // namespace nbdk::vmtest
