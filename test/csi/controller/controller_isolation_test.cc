// Controller work never delays Node work: the real nbdkeeperd on the host
// (no nbd, no Ceph) gets 12 CreateVolume calls for a cluster whose monitor
// nothing listens on, so each waits for librados' connect timeout (10 s);
// meanwhile a NodeUnpublishVolume of a journaled volume, which needs two
// trips to blocking work (the target's path, the node journal), must answer
// at once.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <vector>

#include "csi/proto/csi.grpc.pb.h"
#include "test/common/daemon_process.h"
#include "test/common/http_client.h"
#include "test/csi/planted_volume.h"

namespace nbdk {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A well-formed cephx key (librados refuses to connect with a malformed one).
constexpr char kKey[] = "AQBz1ZlhAAAAABAAqXR2Y1aU1C3lH7OGvXu+Xw==";
// More calls than libuv's pool has threads (4), several times over.
constexpr int kCreates = 12;
// Past the connect timeout: the creates are not waited for any longer (the
// later ones queue behind the first connects, and every create's last step,
// removing its key file, behind all of them).
constexpr auto kCreateDeadline = std::chrono::seconds(12);

double SecondsSince(Clock::time_point start, Clock::time_point t) {
  return std::chrono::duration<double>(t - start).count();
}

class ControllerIsolationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nbdk-isolation-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    // Port 1 on loopback: connections are refused, and librados retries
    // until its timeout.
    std::ofstream(dir_ + "/ceph-csi.json") << R"([{"clusterID": "dead", "monitors": ["127.0.0.1:1"]}])";
    fs::create_directories(dir_ + "/staging/s1");
    Status planted = test::PlantStaleBootVolume(dir_, "vol-staged", dir_ + "/staging/s1", Target());
    ASSERT_TRUE(planted.ok()) << planted.ToString();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Target() const { return dir_ + "/pods/p1/target"; }

  // One cephx user per call: the daemon shares one connect per cluster,
  // user and key, so these are 12 connects, each waiting on the monitor.
  csi::v1::CreateVolumeRequest Create(int i) const {
    csi::v1::CreateVolumeRequest r;
    r.set_name("pvc-" + std::to_string(i));
    r.mutable_capacity_range()->set_required_bytes(1 << 20);
    auto* cap = r.add_volume_capabilities();
    cap->mutable_mount()->set_fs_type("ext4");
    cap->mutable_access_mode()->set_mode(csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
    (*r.mutable_parameters())["clusterID"] = "dead";
    (*r.mutable_parameters())["pool"] = "rbd";
    (*r.mutable_secrets())["userID"] = "user-" + std::to_string(i);
    (*r.mutable_secrets())["userKey"] = kKey;
    return r;
  }

  std::string dir_;
};

TEST_F(ControllerIsolationTest, NodeUnpublishAnswersWhileCreatesWaitOnADeadCluster) {
  test::DaemonProcess daemon(NBDKEEPERD_PATH, dir_);
  ASSERT_TRUE(daemon.Start({"--key-dir=" + dir_ + "/keys", "--ceph-csi-config=" + dir_ + "/ceph-csi.json"}))
      << daemon.Log();
  ASSERT_TRUE(daemon.WaitReady(10000)) << daemon.Log();
  auto channel = grpc::CreateChannel(daemon.endpoint(), grpc::InsecureChannelCredentials());
  auto controller = csi::v1::Controller::NewStub(channel);
  auto node = csi::v1::Node::NewStub(channel);

  const Clock::time_point start = Clock::now();
  std::vector<std::optional<Clock::time_point>> returned(kCreates);
  std::vector<grpc::Status> created(kCreates);
  std::vector<std::thread> calls;
  for (int i = 0; i < kCreates; ++i) {
    calls.emplace_back([&, i] {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + kCreateDeadline);
      csi::v1::CreateVolumeResponse resp;
      created[i] = controller->CreateVolume(&ctx, Create(i), &resp);
      returned[i] = Clock::now();
    });
  }
  // Long enough for every create to reach its connect, far below the
  // connect timeout.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));

  csi::v1::NodeUnpublishVolumeRequest unpublish;
  unpublish.set_volume_id("vol-staged");
  unpublish.set_target_path(Target());
  grpc::ClientContext ctx;
  csi::v1::NodeUnpublishVolumeResponse resp;
  const Clock::time_point sent = Clock::now();
  grpc::Status unpublished = node->NodeUnpublishVolume(&ctx, unpublish, &resp);
  const Clock::time_point answered = Clock::now();
  for (auto& c : calls) c.join();

  Clock::time_point first_create = *returned[0];
  for (const auto& t : returned) first_create = std::min(first_create, *t);
  const double node_s = SecondsSince(sent, answered), answered_s = SecondsSince(start, answered),
               create_s = SecondsSince(start, first_create);
  std::printf("NodeUnpublishVolume took %.3f s; the first of %d CreateVolume calls returned after %.3f s\n", node_s,
              kCreates, create_s);
  EXPECT_TRUE(unpublished.ok()) << unpublished.error_message();
  for (int i = 0; i < kCreates; ++i) EXPECT_FALSE(created[i].ok()) << "create " << i << " reached a dead cluster";
  EXPECT_LT(answered_s, create_s) << "the Node call waited for Controller work";
  EXPECT_LT(node_s, 3.0);
  EXPECT_EQ(test::HttpGet(daemon.health_port(), "/healthz").status, 200) << "the daemon died";
}

}  // namespace
}  // namespace nbdk
