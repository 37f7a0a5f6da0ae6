#include "test/csi/node_vm_fixture.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "csi/mount_table.h"
#include "daemon/base/command.h"
#include "test/common/http_client.h"
#include "test/common/vm_command.h"

namespace nbdk::vmtest {

std::unique_ptr<test::DaemonProcess> NodeVmTest::daemon_;
std::unique_ptr<csi::v1::Node::Stub> NodeVmTest::node_;

namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

const CephEnv& Ceph() {
  static const CephEnv env = [] {
    CephEnv e{Env("CEPH_CONF"), Env("NBDK_CEPH_POOL"), Env("NBDK_CEPH_ID"), Env("NBDK_CEPH_KEY_FILE"), "",
              Env("NBDK_CEPH_MONITORS")};
    e.key = ReadFile(e.keyfile);
    return e;
  }();
  return env;
}

// Stops the shared daemon once, after every suite ran (gtest owns it).
class DaemonEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { NodeVmTest::StopDaemon(); }
};
const auto* const kDaemonEnvironment = ::testing::AddGlobalTestEnvironment(new DaemonEnvironment);

void NodeVmTest::SetUpTestSuite() {
  if (daemon_) return;  // shared by every suite of the binary
  const CephEnv& c = Ceph();
  ASSERT_FALSE(c.conf.empty() || c.pool.empty() || c.user.empty() || c.key.empty() || c.monitors.empty())
      << "run inside the test VM: CEPH_CONF, NBDK_CEPH_POOL, NBDK_CEPH_ID, NBDK_CEPH_KEY_FILE, NBDK_CEPH_MONITORS";
  std::filesystem::remove_all(Root());
  std::filesystem::create_directories(Root() + "/staging");
  std::filesystem::create_directories(Root() + "/pods");
  std::ofstream(Root() + "/config.json") << R"([{"clusterID": "test", "monitors": [")" << c.monitors << R"("]}])";
  daemon_ = std::make_unique<test::DaemonProcess>(NBDKEEPERD_PATH, Root());
  ASSERT_TRUE(daemon_->Start({"--ceph-csi-config=" + Root() + "/config.json", "--ceph-conf=" + c.conf,
                              "--key-dir=" + Root() + "/keys", "--reattach-timeout=60", "--log-level=debug"}))
      << daemon_->Log();
  ASSERT_TRUE(daemon_->WaitReady(60000)) << daemon_->Log();
  node_ = csi::v1::Node::NewStub(grpc::CreateChannel(daemon_->endpoint(), grpc::InsecureChannelCredentials()));
}

void NodeVmTest::StopDaemon() {
  node_.reset();
  if (daemon_) {
    int st = daemon_->Stop(SIGTERM);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "nbdkeeperd exit";
    if (::testing::UnitTest::GetInstance()->failed_test_count() > 0 || !WIFEXITED(st)) {
      std::fprintf(stderr, "--- nbdkeeperd log ---\n%s\n", daemon_->Log().c_str());
    }
  }
  daemon_.reset();
}

void NodeVmTest::CreateImage(const std::string& name, int mib) {
  const CephEnv& c = Ceph();
  const std::vector<std::string> rbd = {"rbd", "-c", c.conf, "--id", c.user, "--keyfile", c.keyfile};
  auto with = [&rbd](std::vector<std::string> args) {
    args.insert(args.begin(), rbd.begin(), rbd.end());
    return args;
  };
  const std::string spec = c.pool + "/" + name;
  auto out = RunCommand(with({"create", "--size", std::to_string(mib), spec}));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  if (out->exit.code != 0) {
    // A leftover of an earlier run of this binary in the same VM: start over.
    auto removed = RunCommand(with({"rm", "--no-progress", spec}));
    ASSERT_TRUE(removed.ok() && removed->exit.code == 0) << "rbd rm " << spec << " (after create failed)";
    out = RunCommand(with({"create", "--size", std::to_string(mib), spec}));
    ASSERT_TRUE(out.ok()) << out.status().ToString();
  }
  ASSERT_EQ(out->exit.code, 0) << "rbd create " << name;
}

csi::v1::VolumeCapability NodeVmTest::MountCap(const std::string& fs_type) {
  csi::v1::VolumeCapability cap;
  cap.mutable_mount()->set_fs_type(fs_type);
  cap.mutable_access_mode()->set_mode(csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  return cap;
}

csi::v1::VolumeCapability NodeVmTest::BlockCap() {
  csi::v1::VolumeCapability cap;
  cap.mutable_block();
  cap.mutable_access_mode()->set_mode(csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  return cap;
}

csi::v1::NodeStageVolumeRequest NodeVmTest::StageReq(const std::string& image,
                                                     const csi::v1::VolumeCapability& cap) {
  csi::v1::NodeStageVolumeRequest req;
  req.set_volume_id(image);
  req.set_staging_target_path(StagingPath(image));
  *req.mutable_volume_capability() = cap;
  (*req.mutable_secrets())["userID"] = Ceph().user;
  (*req.mutable_secrets())["userKey"] = Ceph().key;
  auto& ctx = *req.mutable_volume_context();
  ctx["staticVolume"] = "true";
  ctx["clusterID"] = "test";
  ctx["pool"] = Ceph().pool;
  ctx["mounter"] = "rbd-nbd";
  std::filesystem::create_directories(StagingPath(image));
  return req;
}

grpc::Status NodeVmTest::Stage(const csi::v1::NodeStageVolumeRequest& req) {
  grpc::ClientContext ctx;
  csi::v1::NodeStageVolumeResponse resp;
  return node_->NodeStageVolume(&ctx, req, &resp);
}

grpc::Status NodeVmTest::Unstage(const std::string& volume_id) {
  csi::v1::NodeUnstageVolumeRequest req;
  req.set_volume_id(volume_id);
  req.set_staging_target_path(StagingPath(volume_id));
  grpc::ClientContext ctx;
  csi::v1::NodeUnstageVolumeResponse resp;
  return node_->NodeUnstageVolume(&ctx, req, &resp);
}

grpc::Status NodeVmTest::Publish(const std::string& volume_id, const std::string& target,
                                 const csi::v1::VolumeCapability& cap, bool read_only) {
  csi::v1::NodePublishVolumeRequest req;
  req.set_volume_id(volume_id);
  req.set_staging_target_path(StagingPath(volume_id));
  req.set_target_path(target);
  req.set_readonly(read_only);
  *req.mutable_volume_capability() = cap;
  grpc::ClientContext ctx;
  csi::v1::NodePublishVolumeResponse resp;
  return node_->NodePublishVolume(&ctx, req, &resp);
}

grpc::Status NodeVmTest::Unpublish(const std::string& volume_id, const std::string& target) {
  csi::v1::NodeUnpublishVolumeRequest req;
  req.set_volume_id(volume_id);
  req.set_target_path(target);
  grpc::ClientContext ctx;
  csi::v1::NodeUnpublishVolumeResponse resp;
  return node_->NodeUnpublishVolume(&ctx, req, &resp);
}

csi::v1::NodeGetVolumeStatsResponse NodeVmTest::Stats(const std::string& volume_id, const std::string& path,
                                                      grpc::Status* status) {
  csi::v1::NodeGetVolumeStatsRequest req;
  req.set_volume_id(volume_id);
  req.set_volume_path(path);
  grpc::ClientContext ctx;
  csi::v1::NodeGetVolumeStatsResponse resp;
  *status = node_->NodeGetVolumeStats(&ctx, req, &resp);
  return resp;
}

std::string NodeVmTest::StatusOf(const std::string& volume_id) {
  auto reply = test::HttpGet(daemon_->health_port(), "/status");
  rapidjson::Document doc;
  doc.Parse(reply.body.c_str());
  if (doc.HasParseError() || !doc.HasMember("volumes")) return "";
  for (const auto& v : doc["volumes"].GetArray()) {
    if (v["volume_id"].GetString() != volume_id) continue;
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    v.Accept(w);
    return buf.GetString();
  }
  return "";
}

std::string NodeVmTest::StatusField(const std::string& volume_id, const std::string& field) {
  std::string json = StatusOf(volume_id);
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember(field.c_str())) return "";
  const auto& v = doc[field.c_str()];
  if (v.IsString()) return v.GetString();
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  if (v.IsUint64()) return std::to_string(v.GetUint64());
  if (v.IsBool()) return v.GetBool() ? "true" : "false";
  return "";
}

bool NodeVmTest::IsMounted(const std::string& path) {
  auto table = ReadMountTable();
  return table.ok() && FindMount(*table, path) != nullptr;
}

int NodeVmTest::RbdNbdProcessesFor(const std::string& image) {
  int n = 0;
  std::string spec = Ceph().pool + "/" + image;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find("rbd-nbd") == std::string::npos) continue;
    std::string arg;
    std::stringstream ss(cmdline);
    while (std::getline(ss, arg, '\0')) {
      if (arg == spec) ++n;
    }
  }
  return n;
}

}  // namespace nbdk::vmtest
