// Runs the real nbdkeeperd binary and talks to it as kubelet and Prometheus
// would: CSI Identity over the unix socket with a real gRPC client, and the
// health endpoint over TCP.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "csi/proto/csi.grpc.pb.h"
#include "test/common/daemon_process.h"
#include "test/common/http_client.h"

namespace nbdk {
namespace {

using test::DaemonProcess;
using test::HttpGet;

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nbdk-daemon-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    daemon_ = std::make_unique<DaemonProcess>(NBDKEEPERD_PATH, dir_);
  }
  void TearDown() override {
    daemon_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::unique_ptr<csi::v1::Identity::Stub> Identity() {
    return csi::v1::Identity::NewStub(grpc::CreateChannel(daemon_->endpoint(), grpc::InsecureChannelCredentials()));
  }

  std::string dir_;
  std::unique_ptr<DaemonProcess> daemon_;
};

TEST_F(DaemonTest, IdentityOverUnixSocket) {
  ASSERT_TRUE(daemon_->Start({"--driver-name=test.nbdkeeper.io"})) << daemon_->Log();
  auto stub = Identity();

  grpc::ClientContext c1;
  csi::v1::GetPluginInfoResponse info;
  ASSERT_TRUE(stub->GetPluginInfo(&c1, {}, &info).ok());
  EXPECT_EQ(info.name(), "test.nbdkeeper.io");
  EXPECT_FALSE(info.vendor_version().empty());

  grpc::ClientContext c2;
  csi::v1::GetPluginCapabilitiesResponse caps;
  ASSERT_TRUE(stub->GetPluginCapabilities(&c2, {}, &caps).ok());
  ASSERT_EQ(caps.capabilities_size(), 3);
  EXPECT_EQ(caps.capabilities(0).service().type(), csi::v1::PluginCapability::Service::CONTROLLER_SERVICE);
  // ceph-csi's: topologyConstrainedPools and the node's segments.
  EXPECT_EQ(caps.capabilities(1).service().type(),
            csi::v1::PluginCapability::Service::VOLUME_ACCESSIBILITY_CONSTRAINTS);
  // ceph-csi's: the external resizer expands volumes while they are in use.
  EXPECT_EQ(caps.capabilities(2).volume_expansion().type(), csi::v1::PluginCapability::VolumeExpansion::ONLINE);

  grpc::ClientContext c3;
  csi::v1::ProbeResponse probe;
  ASSERT_TRUE(stub->Probe(&c3, {}, &probe).ok());
  EXPECT_TRUE(probe.has_ready());
  EXPECT_TRUE(probe.ready().value());
}

// NodeGetInfo's topology (csi/topology.h): the segments of the domain
// labels, and always a topology, empty without them, as ceph-csi answers.
TEST_F(DaemonTest, NodeGetInfoReportsTheNodesTopology) {
  for (bool labelled : {false, true}) {
    std::vector<std::string> flags;
    if (labelled)
      flags = {"--node-labels=topology.kubernetes.io/zone=z1,rack=r7", "--domain-labels=topology.kubernetes.io/zone"};
    ASSERT_TRUE(daemon_->Start(flags)) << daemon_->Log();
    auto node = csi::v1::Node::NewStub(grpc::CreateChannel(daemon_->endpoint(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    csi::v1::NodeGetInfoResponse info;
    ASSERT_TRUE(node->NodeGetInfo(&ctx, {}, &info).ok());
    ASSERT_TRUE(info.has_accessible_topology());
    const auto& segments = info.accessible_topology().segments();
    if (labelled) {
      using Segments = std::map<std::string, std::string>;
      EXPECT_EQ(Segments(segments.begin(), segments.end()), (Segments{{"topology.rbd.nbdkeeper.io/zone", "z1"}}));
    } else {
      EXPECT_TRUE(segments.empty());
    }
    ASSERT_EQ(daemon_->Stop(SIGTERM), 0) << daemon_->Log();
  }
}

TEST_F(DaemonTest, SocketIsPrivateByDefault) {
  ASSERT_TRUE(daemon_->Start()) << daemon_->Log();
  struct stat st {};
  ASSERT_EQ(::stat(daemon_->socket_path().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(DaemonTest, SocketModeIsConfigurable) {
  ASSERT_TRUE(daemon_->Start({"--socket-mode=0660"})) << daemon_->Log();
  struct stat st {};
  ASSERT_EQ(::stat(daemon_->socket_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
}

TEST_F(DaemonTest, HealthEndpoint) {
  ASSERT_TRUE(daemon_->Start()) << daemon_->Log();
  int port = daemon_->health_port();
  for (int i = 0; i < 3; ++i) {
    grpc::ClientContext c;
    csi::v1::ProbeResponse probe;
    ASSERT_TRUE(Identity()->Probe(&c, {}, &probe).ok());
  }

  auto healthz = HttpGet(port, "/healthz");
  EXPECT_EQ(healthz.status, 200);
  EXPECT_EQ(healthz.body, "ok\n");
  EXPECT_EQ(HttpGet(port, "/readyz").status, 200);

  auto metrics = HttpGet(port, "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.headers.find("text/plain; version=0.0.4"), std::string::npos);
  EXPECT_NE(metrics.body.find("nbdkeeper_build_info{version="), std::string::npos);
  EXPECT_NE(metrics.body.find("nbdkeeper_uptime_seconds "), std::string::npos);
  EXPECT_NE(metrics.body.find("nbdkeeper_csi_rpcs_total{method=\"Probe\",code=\"OK\"} 3"), std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("nbdkeeper_csi_rpc_duration_seconds_count{method=\"Probe\"} 3"), std::string::npos);

  auto status = HttpGet(port, "/status");
  ASSERT_EQ(status.status, 200);
  rapidjson::Document doc;
  doc.Parse(status.body.c_str());
  ASSERT_FALSE(doc.HasParseError()) << status.body;
  EXPECT_TRUE(doc["ready"].GetBool());
  EXPECT_STREQ(doc["node_id"].GetString(), "test-node");
  EXPECT_TRUE(doc["volumes"].IsArray());

  EXPECT_EQ(HttpGet(port, "/nope").status, 404);
  EXPECT_EQ(test::RawHttp(port, "PUT /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n").status, 405);
  EXPECT_EQ(test::RawHttp(port, "garbage\r\n\r\n").status, 400);
  std::string big = "GET /healthz HTTP/1.1\r\nX-Pad: " + std::string(20000, 'a') + "\r\n\r\n";
  EXPECT_EQ(test::RawHttp(port, big).status, 400);
  EXPECT_EQ(HttpGet(port, "/healthz").status, 200) << "still serving after bad requests";
}

TEST_F(DaemonTest, SigtermStopsCleanlyAndRemovesSocket) {
  ASSERT_TRUE(daemon_->Start()) << daemon_->Log();
  int st = daemon_->Stop(SIGTERM);
  ASSERT_TRUE(WIFEXITED(st)) << st;
  EXPECT_EQ(WEXITSTATUS(st), 0) << daemon_->Log();
  EXPECT_FALSE(std::filesystem::exists(daemon_->socket_path()));
  EXPECT_EQ(daemon_->Log().find("level=error"), std::string::npos) << daemon_->Log();
}

TEST_F(DaemonTest, SecondDaemonOnSameSocketRefuses) {
  ASSERT_TRUE(daemon_->Start()) << daemon_->Log();
  DaemonProcess second(NBDKEEPERD_PATH, dir_);
  EXPECT_FALSE(second.Start());
  int st = second.start_exit_status();
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 1);
  EXPECT_NE(second.Log().find("already running"), std::string::npos) << second.Log();
  EXPECT_TRUE(test::SocketAccepts(daemon_->socket_path())) << "the first daemon keeps its socket";
}

TEST_F(DaemonTest, StaleSocketFromCrashedRunIsReplaced) {
  // A socket file nobody listens on, as a SIGKILLed daemon leaves behind.
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  daemon_->socket_path().copy(addr.sun_path, sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ::close(fd);
  ASSERT_TRUE(std::filesystem::exists(daemon_->socket_path()));
  ASSERT_TRUE(daemon_->Start()) << daemon_->Log();
  EXPECT_NE(daemon_->Log().find("stale_socket_removed"), std::string::npos);
}

// It writes no core file, so its log line is all a crash leaves: the
// signal's name and the frames, then it dies of the signal as before.
TEST_F(DaemonTest, AFatalSignalLeavesItsNameAndBacktraceInTheLog) {
  ASSERT_TRUE(daemon_->Start()) << daemon_->Log();
  int st = daemon_->Stop(SIGSEGV);
  ASSERT_TRUE(WIFSIGNALED(st)) << st;
  EXPECT_EQ(test::DescribeWaitStatus(st), "killed by signal 11 (SEGV)");
  const std::string log = daemon_->Log();
  const std::string header = "nbdkeeperd: fatal signal 11 (SEGV); backtrace of the thread it hit:\n";
  size_t at = log.find(header);
  ASSERT_NE(at, std::string::npos) << log;
  const std::string frames = log.substr(at + header.size());
  EXPECT_GE(std::count(frames.begin(), frames.end(), '\n'), 3) << frames;
  EXPECT_NE(frames.find(")[0x"), std::string::npos) << frames;
  const std::string tail = daemon_->LogTail(2);
  EXPECT_EQ(std::count(tail.begin(), tail.end(), '\n'), 2) << tail;
  EXPECT_TRUE(log.ends_with(tail)) << tail;
}

TEST_F(DaemonTest, BadFlagExitsWithMessage) {
  EXPECT_FALSE(daemon_->Start({"--log-level=loud"}));
  int st = daemon_->start_exit_status();
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 2);
  EXPECT_NE(daemon_->Log().find("--log-level: 'loud' is not one of"), std::string::npos) << daemon_->Log();
}

}  // namespace
}  // namespace nbdk
