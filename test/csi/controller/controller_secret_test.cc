// The encryptionPassphrase secret through the real nbdkeeperd on the host
// (no Ceph): encrypted CreateVolume, CreateSnapshot and expansion requests
// that the daemon refuses at each stage it reaches without a cluster - the
// parameters, the KMS config (read before any cluster, as ceph-csi does),
// the cluster config after the key file is written - with the daemon
// logging at debug. The secret is in no answer, no log line, no /status and
// no file the daemon wrote (state dir, key dir).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "csi/proto/csi.grpc.pb.h"
#include "test/common/daemon_process.h"
#include "test/common/http_client.h"

namespace nbdk {
namespace {

namespace fs = std::filesystem;
using Code = grpc::StatusCode;

constexpr char kSecret[] = "SECRET-encryptionPassphrase-d41c07";
constexpr char kKey[] = "AQBz1ZlhAAAAABAAqXR2Y1aU1C3lH7OGvXu+Xw==";
// Of a cluster config.json does not list: the call ends at the cluster.
constexpr char kVolumeId[] = "0001-0004-gone-0000000000000002-b0a3c3d5-1d1a-4a9e-9a8f-2d7e0d9b7d51";

class ControllerSecretTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nbdk-secret-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::ofstream(dir_ + "/ceph-csi.json") << R"([{"clusterID": "other", "monitors": ["127.0.0.1:1"]}])";
    std::ofstream(dir_ + "/kms.json") << R"({"secrets-metadata": {"encryptionKMSType": "metadata"},
                                             "vault-kms": {"encryptionKMSType": "vault"}})";
  }
  void TearDown() override { fs::remove_all(dir_); }

  template <typename Request>
  static void SetSecrets(Request* r) {
    (*r->mutable_secrets())["userID"] = "csi-rbd-provisioner";
    (*r->mutable_secrets())["userKey"] = kKey;
    (*r->mutable_secrets())["encryptionPassphrase"] = kSecret;
  }

  static csi::v1::CreateVolumeRequest Create(const std::function<void(csi::v1::CreateVolumeRequest*)>& edit) {
    csi::v1::CreateVolumeRequest r;
    r.set_name("pvc-secret");
    r.mutable_capacity_range()->set_required_bytes(1 << 20);
    auto* cap = r.add_volume_capabilities();
    cap->mutable_mount()->set_fs_type("ext4");
    cap->mutable_access_mode()->set_mode(csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
    auto& params = *r.mutable_parameters();
    params["clusterID"] = "gone";
    params["pool"] = "rbd";
    params["encrypted"] = "true";
    params["encryptionKMSID"] = "secrets-metadata";
    SetSecrets(&r);
    edit(&r);
    return r;
  }

  // Every file beneath the test directory but the inputs it wrote itself.
  std::string FilesTheDaemonWrote() const {
    std::string all;
    for (const auto& entry : fs::recursive_directory_iterator(dir_)) {
      if (!entry.is_regular_file()) continue;
      std::string name = entry.path().filename();
      if (name == "ceph-csi.json" || name == "kms.json") continue;
      std::ifstream in(entry.path(), std::ios::binary);
      all += std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    return all;
  }

  std::string dir_;
};

TEST_F(ControllerSecretTest, ThePassphraseIsInNoAnswerLogStatusOrFile) {
  test::DaemonProcess daemon(NBDKEEPERD_PATH, dir_);
  ASSERT_TRUE(daemon.Start({"--key-dir=" + dir_ + "/keys", "--ceph-csi-config=" + dir_ + "/ceph-csi.json",
                            "--kms-config=" + dir_ + "/kms.json", "--log-level=debug"}))
      << daemon.Log();
  ASSERT_TRUE(daemon.WaitReady(10000)) << daemon.Log();
  auto controller =
      csi::v1::Controller::NewStub(grpc::CreateChannel(daemon.endpoint(), grpc::InsecureChannelCredentials()));

  struct Case {
    const char* what;
    csi::v1::CreateVolumeRequest request;
    Code code;
    const char* fragment;
  };
  const Case cases[] = {
      {"fscrypt", Create([](auto* r) { (*r->mutable_parameters())["encryptionType"] = "file"; }),
       Code::INVALID_ARGUMENT, "parameters.encryptionType"},
      {"a vault KMS", Create([](auto* r) { (*r->mutable_parameters())["encryptionKMSID"] = "vault-kms"; }),
       Code::INVALID_ARGUMENT, "parameters.encryptionKMSID"},
      {"an unknown KMS", Create([](auto* r) { (*r->mutable_parameters())["encryptionKMSID"] = "no-such"; }),
       Code::FAILED_PRECONDITION, "parameters.encryptionKMSID"},
      // Past the KMS and the key file, to the cluster config.
      {"a cluster config.json lacks", Create([](auto*) {}), Code::FAILED_PRECONDITION, "'gone'"},
      {"the default KMS", Create([](auto* r) { r->mutable_parameters()->erase("encryptionKMSID"); }),
       Code::FAILED_PRECONDITION, "'gone'"},
  };
  std::string answers;
  for (const Case& c : cases) {
    grpc::ClientContext ctx;
    csi::v1::CreateVolumeResponse resp;
    grpc::Status s = controller->CreateVolume(&ctx, c.request, &resp);
    EXPECT_EQ(s.error_code(), c.code) << c.what << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(c.fragment), std::string::npos) << c.what << ": " << s.error_message();
    answers += s.error_message() + "\n";
  }
  {
    csi::v1::CreateSnapshotRequest snap;
    snap.set_name("snap-secret");
    snap.set_source_volume_id(kVolumeId);
    SetSecrets(&snap);
    grpc::ClientContext ctx;
    csi::v1::CreateSnapshotResponse resp;
    grpc::Status s = controller->CreateSnapshot(&ctx, snap, &resp);
    EXPECT_FALSE(s.ok());
    answers += s.error_message() + "\n";
  }
  {
    csi::v1::ControllerExpandVolumeRequest expand;
    expand.set_volume_id(kVolumeId);
    expand.mutable_capacity_range()->set_required_bytes(2 << 20);
    SetSecrets(&expand);
    grpc::ClientContext ctx;
    csi::v1::ControllerExpandVolumeResponse resp;
    grpc::Status s = controller->ControllerExpandVolume(&ctx, expand, &resp);
    EXPECT_FALSE(s.ok());
    answers += s.error_message() + "\n";
  }

  const std::string status = test::HttpGet(daemon.health_port(), "/status").raw;
  EXPECT_NE(status.find("200"), std::string::npos) << status;
  EXPECT_EQ(answers.find(kSecret), std::string::npos) << answers;
  EXPECT_EQ(status.find(kSecret), std::string::npos) << status;
  const std::string log = daemon.Log();
  EXPECT_NE(log.find("csi_rpc_failed"), std::string::npos) << "the failures were not logged: " << log;
  EXPECT_EQ(log.find(kSecret), std::string::npos) << log;
  EXPECT_EQ(FilesTheDaemonWrote().find(kSecret), std::string::npos);
}

}  // namespace
}  // namespace nbdk
