// The real nbdkeeperd with its state directory on a small tmpfs that the
// test fills (a real ENOSPC, no injection): a NodeStageVolume that reaches
// the journal write fails RESOURCE_EXHAUSTED over gRPC naming the journal
// file, leaves no key file, temp file or record, and the daemon keeps
// answering with its journaled volume still listed. Skipped where a tmpfs
// cannot be mounted.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "csi/proto/csi.grpc.pb.h"
#include "test/common/daemon_process.h"
#include "test/common/http_client.h"
#include "test/common/tmpfs_mount.h"
#include "test/csi/host_stage_request.h"
#include "test/csi/planted_volume.h"

namespace nbdk {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

class StateDirFullDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nbdk-full-state-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directories(dir_ + "/staging/s1");
    std::ofstream(dir_ + "/ceph-csi.json") << test::kCephCsiConfig;
  }
  void TearDown() override {
    daemon_.reset();
    tmpfs_.reset();
    fs::remove_all(dir_);
  }

  std::string dir_;
  std::unique_ptr<test::TmpfsMount> tmpfs_;
  std::unique_ptr<test::DaemonProcess> daemon_;
};

TEST_F(StateDirFullDaemonTest, StageFailsResourceExhaustedAndTheDaemonServesOn) {
  tmpfs_ = std::make_unique<test::TmpfsMount>(dir_ + "/state", "size=256k");
  if (!tmpfs_->mounted()) GTEST_SKIP() << "needs a tmpfs: " << tmpfs_->error();
  Status planted = test::PlantStaleBootVolume(dir_, "vol-journaled", dir_ + "/staging/journaled", dir_ + "/pods/t");
  ASSERT_TRUE(planted.ok()) << planted.ToString();
  daemon_ = std::make_unique<test::DaemonProcess>(NBDKEEPERD_PATH, dir_);
  ASSERT_TRUE(daemon_->Start({"--key-dir=" + dir_ + "/keys", "--ceph-csi-config=" + dir_ + "/ceph-csi.json"}))
      << daemon_->Log();
  ASSERT_TRUE(daemon_->WaitReady(10000)) << daemon_->Log();
  ASSERT_EQ(test::TmpfsMount::FillBlocks(dir_ + "/state/filler"), ENOSPC);

  // A static volume: the stage needs no cluster before its journal write.
  csi::v1::NodeStageVolumeRequest req = test::HostStageRequest(dir_ + "/staging/s1");
  (*req.mutable_volume_context())["imageName"] = "img-full";
  auto node = csi::v1::Node::NewStub(grpc::CreateChannel(daemon_->endpoint(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  csi::v1::NodeStageVolumeResponse resp;
  grpc::Status s = node->NodeStageVolume(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find(dir_ + "/state/journal/v." + test::kVolumeId + ".rec.tmp"), std::string::npos)
      << s.error_message();
  EXPECT_NE(s.error_message().find("No space left on device"), std::string::npos) << s.error_message();

  EXPECT_EQ(Names(dir_ + "/state/journal"), (std::vector<std::string>{"LOCK", "v.vol-journaled.rec"}));
  EXPECT_TRUE(fs::is_empty(dir_ + "/keys"));
  EXPECT_EQ(Names(dir_ + "/staging/s1"), std::vector<std::string>{}) << "no stash, no mount point";
  EXPECT_EQ(test::HttpGet(daemon_->health_port(), "/readyz").status, 200);
  std::string status = test::HttpGet(daemon_->health_port(), "/status").body;
  EXPECT_NE(status.find(R"("volume_id":"vol-journaled")"), std::string::npos) << status;
  EXPECT_EQ(status.find(test::kVolumeId), std::string::npos) << status;
  EXPECT_EQ(daemon_->Stop(SIGTERM), 0) << daemon_->Log();
}

}  // namespace
}  // namespace nbdk
