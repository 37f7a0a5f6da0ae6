// Errors about huge or hostile request fields, through a real nbdkeeperd
// over its socket (no nbd, no Ceph): the status message the daemon sends is
// bounded and escaped, a client with gRPC's default metadata limit gets the
// real code, and the connection stays usable (issue #27: a status message
// quoting a 64 KiB field is larger than a client's metadata limit).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>

#include "base/quote_field.h"
#include "csi/proto/csi.grpc.pb.h"
#include "test/common/daemon_process.h"
#include "test/csi/host_stage_request.h"

namespace nbdk {
namespace {

namespace fs = std::filesystem;
using grpc::StatusCode;
using Clock = std::chrono::steady_clock;

constexpr size_t kHuge = 64 * 1024;

// One call on a channel, with the context to use.
using Call = std::function<grpc::Status(const std::shared_ptr<grpc::Channel>&, grpc::ClientContext*)>;

struct Case {
  std::string name;
  Call call;
  StatusCode code;
};

// The call of a stub's `method` with `request`, on whichever channel.
template <typename Stub, typename Request, typename Response>
Call Unary(grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*), Request request) {
  return [method, request](const std::shared_ptr<grpc::Channel>& channel, grpc::ClientContext* ctx) {
    Stub stub(channel);
    Response response;
    return (stub.*method)(ctx, request, &response);
  };
}

class BoundedErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nbdk-bounded-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directories(dir_ + "/staging/s1");
    std::ofstream(dir_ + "/ceph-csi.json") << test::kCephCsiConfig;
    daemon_ = std::make_unique<test::DaemonProcess>(NBDKEEPERD_PATH, dir_);
    ASSERT_TRUE(daemon_->Start({"--key-dir=" + dir_ + "/keys", "--ceph-csi-config=" + dir_ + "/ceph-csi.json"}))
        << daemon_->Log();
    ASSERT_TRUE(daemon_->WaitReady(10000)) << daemon_->Log();
    channel_ = grpc::CreateChannel(daemon_->endpoint(), grpc::InsecureChannelCredentials());
    identity_ = csi::v1::Identity::NewStub(channel_);
    // What the daemon sends, whatever its size: a client that takes 1 MiB
    // of metadata.
    grpc::ChannelArguments wide;
    wide.SetInt(GRPC_ARG_MAX_METADATA_SIZE, 1 << 20);
    wide_channel_ = grpc::CreateCustomChannel(daemon_->endpoint(), grpc::InsecureChannelCredentials(), wide);
  }

  void TearDown() override {
    // Closed first: the daemon's shutdown waits for open connections.
    identity_.reset();
    channel_.reset();
    wide_channel_.reset();
    if (daemon_) {
      EXPECT_EQ(daemon_->Stop(SIGTERM), 0) << daemon_->Log();
    }
    fs::remove_all(dir_);
  }

  // NodeStageVolume of a valid request after `edit`.
  Call StageWith(const std::function<void(csi::v1::NodeStageVolumeRequest*)>& edit) const {
    auto r = test::HostStageRequest(dir_ + "/staging/s1");
    edit(&r);
    return Unary(&csi::v1::Node::Stub::NodeStageVolume, r);
  }

  // Runs `call` on `channel` with a deadline; a hung channel answers
  // DEADLINE_EXCEEDED.
  static grpc::Status WithDeadline(const Call& call, const std::shared_ptr<grpc::Channel>& channel) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    return call(channel, &ctx);
  }

  // Identity's GetPluginInfo on the default channel: answered at once when
  // the connection is healthy.
  grpc::Status PluginInfo() {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    csi::v1::GetPluginInfoResponse resp;
    return identity_->GetPluginInfo(&ctx, csi::v1::GetPluginInfoRequest(), &resp);
  }

  std::string dir_;
  std::unique_ptr<test::DaemonProcess> daemon_;
  std::shared_ptr<grpc::Channel> channel_, wide_channel_;
  std::unique_ptr<csi::v1::Identity::Stub> identity_;
};

TEST_F(BoundedErrorsTest, A64KiBFieldGetsABoundedAnswerAndTheChannelStaysUsable) {
  const std::string huge(kHuge, 'a');
  auto context = [](csi::v1::NodeStageVolumeRequest* r) { return r->mutable_volume_context(); };
  csi::v1::ValidateVolumeCapabilitiesRequest validate;
  validate.set_volume_id(huge);
  *validate.add_volume_capabilities() = test::HostStageRequest("/").volume_capability();
  csi::v1::ListSnapshotsRequest list;
  list.set_starting_token(huge);
  std::vector<Case> cases = {
      {"stage with a 64 KiB fs_type",
       StageWith([&](auto* r) { r->mutable_volume_capability()->mutable_mount()->set_fs_type(huge); }),
       StatusCode::FAILED_PRECONDITION},
      {"stage with a 64 KiB mounter", StageWith([&](auto* r) { (*context(r))["mounter"] = huge; }),
       StatusCode::INVALID_ARGUMENT},
      {"stage with a 64 KiB staticVolume", StageWith([&](auto* r) { (*context(r))["staticVolume"] = huge; }),
       StatusCode::INVALID_ARGUMENT},
      {"stage with a 64 KiB map option value",
       StageWith([&](auto* r) { (*context(r))["mapOptions"] = "nbd:io_timeout=" + huge; }),
       StatusCode::INVALID_ARGUMENT},
      {"validate a 64 KiB volume ID", Unary(&csi::v1::Controller::Stub::ValidateVolumeCapabilities, validate),
       StatusCode::NOT_FOUND},
      {"list snapshots from a 64 KiB token", Unary(&csi::v1::Controller::Stub::ListSnapshots, list),
       StatusCode::ABORTED},
  };
  for (const Case& c : cases) {
    grpc::Status sent = WithDeadline(c.call, wide_channel_);
    EXPECT_EQ(sent.error_code(), c.code) << c.name << ": " << sent.error_message().substr(0, 200);
    EXPECT_LE(sent.error_message().size(), kMaxMessageBytes) << c.name;
    EXPECT_EQ(sent.error_message().find(test::kKey), std::string::npos) << c.name << " shows the key";
    // The parser quoted the field (QuoteField states its length) instead of
    // leaving it to the last guard at the gRPC boundary.
    EXPECT_NE(sent.error_message().find("' (" + std::to_string(kHuge) + " bytes)"), std::string::npos)
        << c.name << ": " << sent.error_message().substr(0, 300);

    // A client with the default metadata limit gets the same answer, and its
    // next call on the same channel is answered at once.
    auto start = Clock::now();
    grpc::Status got = WithDeadline(c.call, channel_);
    EXPECT_EQ(got.error_code(), c.code) << c.name << ": " << got.error_message().substr(0, 200);
    EXPECT_EQ(got.error_message(), sent.error_message()) << c.name;
    grpc::Status after = PluginInfo();
    EXPECT_TRUE(after.ok()) << c.name << ", then GetPluginInfo: " << after.error_message();
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(2)) << c.name << " and the call after it were slow";
  }
  EXPECT_EQ(channel_->GetState(false), GRPC_CHANNEL_READY);
}

TEST_F(BoundedErrorsTest, ControlCharactersInAFieldAreEscapedInTheMessage) {
  // Protobuf strings are UTF-8, so a request carries no other bytes; a C1
  // control (U+009B, CSI) is UTF-8 and escaped all the same.
  grpc::Status s = WithDeadline(
      StageWith([](auto* r) { (*r->mutable_volume_context())["mounter"] = "krbd\n\x1b[2J\u009b1m evil"; }), channel_);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("'krbd\\n\\x1b[2J\\xc2\\x9b1m evil'"), std::string::npos) << s.error_message();
  for (char c : s.error_message()) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << s.error_message();
}

}  // namespace
}  // namespace nbdk
