// Hostile and malformed CSI requests against the real nbdkeeperd over its
// socket, on the host (no nbd, no Ceph), and bytes that are no request at
// all. Each case checks the answer's code
// (and what it names); afterwards every planted file, directory, symlink
// target and mount is as it was, no key file was written, and the daemon
// still answers.
#include <google/protobuf/descriptor.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <future>

#include "csi/proto/csi.grpc.pb.h"
#include "test/common/daemon_process.h"
#include "test/common/http_client.h"
#include "test/csi/host_stage_request.h"
#include "test/csi/planted_volume.h"

namespace nbdk {
namespace {

namespace fs = std::filesystem;
using grpc::StatusCode;
using test::kKey;
using test::kVolumeId;

struct Case {
  std::string name;
  std::function<grpc::Status()> call;
  StatusCode code;
  std::string mentions;  // "" for no check
};

class HostileRequestsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nbdk-hostile-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    outside_ = dir_ + "-outside";
    fs::create_directories(outside_ + "/precious");
    std::ofstream(outside_ + "/precious/data") << "keep";
    fs::create_directories(dir_ + "/pods/p1/planted-dir");
    fs::create_directories(dir_ + "/staging/s1");
    fs::create_directories(dir_ + "/staging/journaled");
    std::ofstream(dir_ + "/pods/p1/planted-file") << "keep";
    fs::create_directory_symlink(outside_, dir_ + "/pods/escape");
    // A mount the daemon did not make, where an unknown volume's unstage
    // used to run umount.
    fs::create_directories(dir_ + "/staging/s1/" + std::string(kVolumeId));
    mounted_ = ::mount("tmpfs", (dir_ + "/staging/s1/" + kVolumeId).c_str(), "tmpfs", 0, "size=1m") == 0;
    std::ofstream(dir_ + "/ceph-csi.json") << test::kCephCsiConfig;
    PlantJournaledVolume();
  }

  void TearDown() override {
    if (mounted_) ::umount2((dir_ + "/staging/s1/" + kVolumeId).c_str(), MNT_DETACH);
    fs::remove_all(dir_);
    fs::remove_all(outside_);
  }

  // A volume staged before a reboot: known to the journal, served by nothing.
  void PlantJournaledVolume() {
    Status planted = test::PlantStaleBootVolume(dir_, "vol-journaled", dir_ + "/staging/journaled",
                                                dir_ + "/pods/p1/journaled-target");
    ASSERT_TRUE(planted.ok()) << planted.ToString();
  }

  csi::v1::NodeStageVolumeRequest Stage() const { return test::HostStageRequest(dir_ + "/staging/s1"); }

  csi::v1::CreateVolumeRequest Create() const {
    csi::v1::CreateVolumeRequest r;
    r.set_name("pvc-1");
    auto* cap = r.add_volume_capabilities();
    cap->mutable_mount()->set_fs_type("ext4");
    cap->mutable_access_mode()->set_mode(csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
    (*r.mutable_parameters())["clusterID"] = "test";
    (*r.mutable_parameters())["pool"] = "rbd";
    (*r.mutable_secrets())["userID"] = "nbdk";
    (*r.mutable_secrets())["userKey"] = kKey;
    return r;
  }

  grpc::Status DoStage(csi::v1::NodeStageVolumeRequest r) {
    grpc::ClientContext ctx;
    csi::v1::NodeStageVolumeResponse resp;
    return node_->NodeStageVolume(&ctx, r, &resp);
  }
  grpc::Status DoUnstage(const std::string& id, const std::string& path) {
    csi::v1::NodeUnstageVolumeRequest r;
    r.set_volume_id(id);
    r.set_staging_target_path(path);
    grpc::ClientContext ctx;
    csi::v1::NodeUnstageVolumeResponse resp;
    return node_->NodeUnstageVolume(&ctx, r, &resp);
  }
  grpc::Status DoPublish(csi::v1::NodePublishVolumeRequest r) {
    grpc::ClientContext ctx;
    csi::v1::NodePublishVolumeResponse resp;
    return node_->NodePublishVolume(&ctx, r, &resp);
  }
  grpc::Status DoUnpublish(const std::string& id, const std::string& target) {
    csi::v1::NodeUnpublishVolumeRequest r;
    r.set_volume_id(id);
    r.set_target_path(target);
    grpc::ClientContext ctx;
    csi::v1::NodeUnpublishVolumeResponse resp;
    return node_->NodeUnpublishVolume(&ctx, r, &resp);
  }
  grpc::Status DoStats(const std::string& id, const std::string& path) {
    csi::v1::NodeGetVolumeStatsRequest r;
    r.set_volume_id(id);
    r.set_volume_path(path);
    grpc::ClientContext ctx;
    csi::v1::NodeGetVolumeStatsResponse resp;
    return node_->NodeGetVolumeStats(&ctx, r, &resp);
  }
  grpc::Status DoExpand(const std::string& id, const std::string& path, int64_t required) {
    csi::v1::NodeExpandVolumeRequest r;
    r.set_volume_id(id);
    r.set_volume_path(path);
    r.mutable_capacity_range()->set_required_bytes(required);
    grpc::ClientContext ctx;
    csi::v1::NodeExpandVolumeResponse resp;
    return node_->NodeExpandVolume(&ctx, r, &resp);
  }
  grpc::Status DoCreate(csi::v1::CreateVolumeRequest r) {
    grpc::ClientContext ctx;
    csi::v1::CreateVolumeResponse resp;
    return controller_->CreateVolume(&ctx, r, &resp);
  }
  grpc::Status DoValidate(const std::string& id) {
    csi::v1::ValidateVolumeCapabilitiesRequest r;
    r.set_volume_id(id);
    *r.add_volume_capabilities() = Stage().volume_capability();
    (*r.mutable_secrets())["userID"] = "nbdk";
    (*r.mutable_secrets())["userKey"] = kKey;
    grpc::ClientContext ctx;
    csi::v1::ValidateVolumeCapabilitiesResponse resp;
    return controller_->ValidateVolumeCapabilities(&ctx, r, &resp);
  }

  std::vector<Case> Cases();

  std::string dir_, outside_;
  bool mounted_ = false;
  std::unique_ptr<csi::v1::Node::Stub> node_;
  std::unique_ptr<csi::v1::Controller::Stub> controller_;
};

std::vector<Case> HostileRequestsTest::Cases() {
  const std::string root = dir_;
  const std::string id = kVolumeId;
  auto stage_with = [this](std::function<void(csi::v1::NodeStageVolumeRequest*)> edit) {
    return [this, edit] {
      auto r = Stage();
      edit(&r);
      return DoStage(r);
    };
  };
  auto context = [](csi::v1::NodeStageVolumeRequest* r) { return r->mutable_volume_context(); };
  auto map_options = [stage_with, context](std::string options) {
    return stage_with([context, options](auto* r) { (*context(r))["mapOptions"] = "nbd:" + options; });
  };
  auto mount_flag = [stage_with](std::string flag) {
    return stage_with([flag](auto* r) { r->mutable_volume_capability()->mutable_mount()->add_mount_flags(flag); });
  };
  auto create_with = [this](std::function<void(csi::v1::CreateVolumeRequest*)> edit) {
    return [this, edit] {
      auto r = Create();
      edit(&r);
      return DoCreate(r);
    };
  };
  auto publish = [this, root](std::string volume, std::string target, bool with_capability, std::string staging) {
    return [=, this] {
      csi::v1::NodePublishVolumeRequest r;
      r.set_volume_id(volume);
      r.set_target_path(target);
      r.set_staging_target_path(staging);
      if (with_capability) *r.mutable_volume_capability() = Stage().volume_capability();
      return DoPublish(r);
    };
  };
  const auto kInvalid = StatusCode::INVALID_ARGUMENT, kPrecondition = StatusCode::FAILED_PRECONDITION,
             kNotFound = StatusCode::NOT_FOUND, kOk = StatusCode::OK;
  return {
      // Unpublish and unstage of what the journal does not know: OK, untouched.
      {"unpublish unknown volume at a planted file",
       [=, this] { return DoUnpublish("no-such-volume", root + "/pods/p1/planted-file"); }, kOk, ""},
      {"unpublish unknown volume at a planted dir",
       [=, this] { return DoUnpublish("no-such-volume", root + "/pods/p1/planted-dir"); }, kOk, ""},
      {"unpublish unknown volume outside the root",
       [=, this] { return DoUnpublish("no-such-volume", outside_ + "/precious"); }, kOk, ""},
      {"unpublish a target the journal does not list",
       [=, this] { return DoUnpublish("vol-journaled", root + "/pods/p1/planted-dir"); }, kOk, ""},
      {"unstage unknown volume over a planted mount", [=, this] { return DoUnstage(id, root + "/staging/s1"); },
       kPrecondition, "/staging/s1/" + id + " mounted"},
      {"unstage at another path than journaled", [=, this] { return DoUnstage("vol-journaled", root + "/staging/s1"); },
       kPrecondition, "staged at " + root + "/staging/journaled"},
      {"unstage while published", [=, this] { return DoUnstage("vol-journaled", root + "/staging/journaled"); },
       kPrecondition, "still published"},
      // Malformed IDs and paths.
      {"unpublish without volume id", [=, this] { return DoUnpublish("", root + "/pods/p1/x"); }, kInvalid,
       "volume_id"},
      {"unpublish without target", [=, this] { return DoUnpublish(id, ""); }, kInvalid, "target_path"},
      {"unpublish target /", [=, this] { return DoUnpublish(id, "/"); }, kInvalid, "root directory"},
      {"unpublish relative target", [=, this] { return DoUnpublish(id, "pods/p1"); }, kInvalid, "absolute"},
      {"unpublish target with ..", [=, this] { return DoUnpublish(id, root + "/pods/../../etc"); }, kInvalid, "'..'"},
      {"unpublish id with a path", [=, this] { return DoUnpublish("../../etc", root + "/pods/p1/x"); }, kInvalid,
       "volume_id"},
      {"unstage 129-byte id", [=, this] { return DoUnstage(std::string(129, 'a'), root + "/staging/s1"); }, kInvalid,
       "129 bytes"},
      {"unstage id that reads as an option", [=, this] { return DoUnstage("--help", root + "/staging/s1"); }, kInvalid,
       "starts with '-'"},
      {"unstage path with a newline", [=, this] { return DoUnstage(id, root + "/staging/a\nb"); }, kInvalid,
       "control character"},
      {"stage id with a slash", stage_with([](auto* r) { r->set_volume_id("a/b"); }), kInvalid, "volume_id"},
      {"stage without capability", stage_with([](auto* r) { r->clear_volume_capability(); }), kInvalid,
       "volume_capability"},
      {"stage without secrets", stage_with([](auto* r) { r->clear_secrets(); }), kInvalid, "userID"},
      {"stage with a key that is not base64",
       stage_with([](auto* r) { (*r->mutable_secrets())["userKey"] = "AQB;rm -rf /"; }), kInvalid, "userKey"},
      // Paths outside csi_root or through a symlink.
      {"stage outside csi_root", stage_with([this](auto* r) { r->set_staging_target_path(outside_); }), kInvalid,
       "csi_root"},
      {"stage through a symlink",
       stage_with([root](auto* r) { r->set_staging_target_path(root + "/pods/escape/precious"); }), kInvalid,
       "symbolic link"},
      {"stage at a missing directory",
       stage_with([root](auto* r) { r->set_staging_target_path(root + "/staging/none"); }), kPrecondition,
       "not an existing directory"},
      {"stage at /etc", stage_with([](auto* r) { r->set_staging_target_path("/etc"); }), kInvalid, "csi_root"},
      // Map options: allow-listed, in every spelling.
      {"map option io_timeout=30", map_options("io_timeout=30"), kInvalid, "only 0"},
      {"map option io-timeout=30", map_options("io-timeout=30"), kInvalid, "only 0"},
      {"map option admin-socket", map_options("admin-socket=" + root + "/pods/p1/planted-file"), kInvalid,
       "admin-socket"},
      {"map option log-file", map_options("log_file=/etc/shadow"), kInvalid, "log_file"},
      {"map option quiesce-hook", map_options("quiesce-hook=/bin/sh"), kInvalid, "quiesce-hook"},
      {"map option reattach_timeout", map_options("reattach_timeout=1"), kInvalid, "reattach_timeout_s"},
      {"map option rbd_cache", map_options("rbd_cache=true"), kInvalid, "cache"},
      {"map option device", map_options("device=/dev/nbd0"), kInvalid, "device"},
      {"pool that reads as an option", stage_with([context](auto* r) { (*context(r))["pool"] = "--conf=x"; }), kInvalid,
       "starts with '-'"},
      {"image name with @", stage_with([context](auto* r) { (*context(r))["imageName"] = "a@snap"; }), kInvalid,
       "imageName"},
      // Mount flags: allow-listed.
      {"mount flag nobarrier", mount_flag("nobarrier"), kInvalid, "mount_flags[0]"},
      {"mount flag errors=panic", mount_flag("errors=panic"), kInvalid, "mount_flags[0]"},
      {"mount flag suid", mount_flag("suid"), kInvalid, "mount_flags[0]"},
      {"mount flag with a path", mount_flag("journal_path=/dev/sda"), kInvalid, "mount_flags[0]"},
      {"fs type btrfs",
       stage_with([](auto* r) { r->mutable_volume_capability()->mutable_mount()->set_fs_type("btrfs"); }),
       kPrecondition, "btrfs"},
      {"multi-node writer on a filesystem", stage_with([](auto* r) {
         r->mutable_volume_capability()->mutable_access_mode()->set_mode(
             csi::v1::VolumeCapability::AccessMode::MULTI_NODE_MULTI_WRITER);
       }),
       kPrecondition, "MULTI_NODE_MULTI_WRITER"},
      {"encrypted volume", stage_with([context](auto* r) { (*context(r))["encrypted"] = "true"; }), kInvalid,
       "encrypted"},
      {"krbd mounter", stage_with([context](auto* r) { (*context(r))["mounter"] = "rbd"; }), kInvalid, "mounter"},
      // One mapping per image: a static volume naming the journaled image.
      {"second volume ID for a staged image", stage_with([context](auto* r) {
         r->set_volume_id("img-a");
         (*context(r))["staticVolume"] = "true";
       }),
       kPrecondition, "already staged on this node as volume vol-journaled"},
      // Publish.
      {"publish without capability or staging path", publish(id, root + "/pods/p1/new-target", false, ""), kInvalid,
       "volume_capability"},
      {"publish an unknown volume", publish(id, root + "/pods/p1/new-target", true, root + "/staging/s1"),
       kPrecondition, "not staged"},
      {"publish over a file outside the root", publish(id, outside_ + "/precious/data", true, root + "/staging/s1"),
       kPrecondition, "not staged"},
      // Stats and expand: the volume first, then a journaled path.
      {"stats of an unknown volume", [=, this] { return DoStats("no-such-volume", "some/path"); }, kNotFound,
       "not staged"},
      {"stats at a path the volume is not", [=, this] { return DoStats("vol-journaled", "/etc"); }, kNotFound,
       "not at '/etc'"},
      {"stats without a path", [=, this] { return DoStats("vol-journaled", ""); }, kInvalid, "volume_path"},
      {"expand an unknown volume", [=, this] { return DoExpand("no-such-volume", "some/path", 1 << 30); }, kNotFound,
       "not staged"},
      {"expand with a negative size",
       [=, this] { return DoExpand("vol-journaled", root + "/pods/p1/journaled-target", -1); }, kInvalid, "negative"},
      // Controller.
      {"create without a name", create_with([](auto* r) { r->clear_name(); }), kInvalid, "name"},
      {"create with io_timeout",
       create_with([](auto* r) { (*r->mutable_parameters())["mapOptions"] = "nbd:io_timeout=30"; }), kInvalid,
       "mapOptions"},
      {"create with admin_socket",
       create_with([](auto* r) { (*r->mutable_parameters())["mapOptions"] = "nbd:admin_socket=/x"; }), kInvalid,
       "admin_socket"},
      {"create in a pool that reads as an option",
       create_with([](auto* r) { (*r->mutable_parameters())["pool"] = "-x"; }), kInvalid, "starts with '-'"},
      {"create with mount flag nobarrier",
       create_with([](auto* r) { r->mutable_volume_capabilities(0)->mutable_mount()->add_mount_flags("nobarrier"); }),
       kInvalid, "mount_flags[0]"},
      {"create smaller than a MiB under its limit", create_with([](auto* r) {
         r->mutable_capacity_range()->set_required_bytes(1);
         r->mutable_capacity_range()->set_limit_bytes(1000);
       }),
       StatusCode::OUT_OF_RANGE, "limit_bytes"},
      {"create for a cluster the node does not know",
       create_with([](auto* r) { (*r->mutable_parameters())["clusterID"] = "other"; }), kPrecondition,
       "ceph_csi_config"},
      {"validate an ID no volume can have", [=, this] { return DoValidate("fake-vol-id-1"); }, kNotFound,
       "does not exist"},
  };
}

// The daemon of these tests, started and ready.
void StartReady(test::DaemonProcess& daemon, const std::string& dir) {
  ASSERT_TRUE(daemon.Start({"--key-dir=" + dir + "/keys", "--ceph-csi-config=" + dir + "/ceph-csi.json"}))
      << daemon.Log();
  for (int i = 0; i < 500 && test::HttpGet(daemon.health_port(), "/readyz").status != 200; ++i) usleep(10000);
  ASSERT_EQ(test::HttpGet(daemon.health_port(), "/readyz").status, 200) << daemon.Log();
}

// One unary call of `method` ("/csi.v1.Node/NodeStageVolume") with `bytes`
// as its request, whatever they are.
grpc::Status RawCall(grpc::GenericStub& stub, const std::string& method, const std::string& bytes) {
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1), response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  std::promise<grpc::Status> answer;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                 [&answer](grpc::Status s) { answer.set_value(std::move(s)); });
  return answer.get_future().get();
}

TEST_F(HostileRequestsTest, EachIsAnsweredWithItsCodeAndNothingIsTouched) {
  test::DaemonProcess daemon(NBDKEEPERD_PATH, dir_);
  ASSERT_NO_FATAL_FAILURE(StartReady(daemon, dir_));
  auto channel = grpc::CreateChannel(daemon.endpoint(), grpc::InsecureChannelCredentials());
  node_ = csi::v1::Node::NewStub(channel);
  controller_ = csi::v1::Controller::NewStub(channel);

  std::vector<Case> cases = Cases();
  EXPECT_GE(cases.size(), 40u);
  for (const Case& c : cases) {
    grpc::Status s = c.call();
    EXPECT_EQ(s.error_code(), c.code) << c.name << ": " << s.error_message();
    if (!c.mentions.empty()) {
      EXPECT_NE(s.error_message().find(c.mentions), std::string::npos)
          << c.name << ": '" << s.error_message() << "' should mention '" << c.mentions << "'";
    }
    EXPECT_EQ(s.error_message().find(kKey), std::string::npos) << c.name << " leaked the key";
  }

  EXPECT_TRUE(fs::exists(dir_ + "/pods/p1/planted-file"));
  EXPECT_TRUE(fs::is_directory(dir_ + "/pods/p1/planted-dir"));
  EXPECT_TRUE(fs::is_symlink(dir_ + "/pods/escape"));
  EXPECT_TRUE(fs::exists(outside_ + "/precious/data"));
  EXPECT_EQ(std::distance(fs::directory_iterator(outside_), fs::directory_iterator()), 1) << "made outside the root";
  EXPECT_FALSE(fs::exists(dir_ + "/pods/p1/new-target")) << "created for a volume that is not staged";
  if (mounted_) {
    struct stat inner {
    }, outer{};
    ASSERT_EQ(::stat((dir_ + "/staging/s1/" + kVolumeId).c_str(), &inner), 0);
    ASSERT_EQ(::stat((dir_ + "/staging/s1").c_str(), &outer), 0);
    EXPECT_NE(inner.st_dev, outer.st_dev) << "the planted mount was unmounted";
  }
  EXPECT_FALSE(fs::exists(dir_ + "/keys") && !fs::is_empty(dir_ + "/keys")) << "a key file stayed behind";
  EXPECT_EQ(test::HttpGet(daemon.health_port(), "/healthz").status, 200) << "the daemon died";
  EXPECT_EQ(daemon.Stop(SIGTERM), 0) << daemon.Log();
}

// gRPC's generated handlers answer a request that does not parse with
// UNIMPLEMENTED, which tells a CO the RPC does not exist. Every method the
// daemon implements (an empty request, which parses, is not UNIMPLEMENTED)
// answers bytes that are no message (a field whose length runs past the
// end) with INVALID_ARGUMENT naming the message type.
TEST_F(HostileRequestsTest, ARequestThatDoesNotParseIsInvalidArgumentInEveryMethod) {
  test::DaemonProcess daemon(NBDKEEPERD_PATH, dir_);
  ASSERT_NO_FATAL_FAILURE(StartReady(daemon, dir_));
  grpc::GenericStub stub(grpc::CreateChannel(daemon.endpoint(), grpc::InsecureChannelCredentials()));
  const std::string truncated("\x0a\xff\x01", 3);
  int implemented = 0;
  for (const char* name : {"csi.v1.Identity", "csi.v1.Node", "csi.v1.Controller"}) {
    const auto* service = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
    ASSERT_NE(service, nullptr) << name;
    for (int i = 0; i < service->method_count(); ++i) {
      const auto* m = service->method(i);
      std::string path = "/" + service->full_name() + "/" + m->name();
      if (RawCall(stub, path, "").error_code() == StatusCode::UNIMPLEMENTED) continue;
      ++implemented;
      grpc::Status s = RawCall(stub, path, truncated);
      EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << path << ": " << s.error_message();
      EXPECT_NE(s.error_message().find(m->input_type()->full_name()), std::string::npos)
          << path << ": '" << s.error_message() << "' should name " << m->input_type()->full_name();
    }
  }
  EXPECT_EQ(implemented, 19) << "Identity 3, Node 8, Controller 8";
  EXPECT_EQ(test::HttpGet(daemon.health_port(), "/healthz").status, 200) << "the daemon died";
  EXPECT_EQ(daemon.Stop(SIGTERM), 0) << daemon.Log();
}

}  // namespace
}  // namespace nbdk
