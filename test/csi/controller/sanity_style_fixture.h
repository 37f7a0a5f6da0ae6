// VM tests in the CSI sanity suite's style (kubernetes-csi/csi-test v5,
// pkg/sanity), for what the suite itself does not try (clone_delete_order_vm),
// with the project's own gRPC client against the real nbdkeeperd and the VM's
// Ceph. The suite itself runs as csi_sanity_vm.
//
// The fixture plays the suite's TestContext and Resources: its requests are
// built as the suite's Make*Req build them (SINGLE_NODE_WRITER mount
// capability, the test volume size, the StorageClass parameters and the
// secrets a sanity secrets file would give), one staging path and one
// target path shared by every test, and every volume and snapshot a test
// creates is cleaned up afterwards, last first, as Resources.Cleanup does:
// NodeUnpublish, NodeUnstage (each OK or NOT_FOUND, even for a volume never
// staged), DeleteVolume; DeleteSnapshot.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "test/csi/node_vm_fixture.h"

namespace nbdk::vmtest {

class CsiSanityVmTest : public NodeVmTest {
 protected:
  using Code = grpc::StatusCode;
  using Mode = csi::v1::VolumeCapability::AccessMode::Mode;

  // The suite's TestVolumeSize and TestVolumeExpandSize (small: thin images
  // cost nothing, but mkfs and TCG do).
  static constexpr int64_t kTestVolumeSize = int64_t{64} << 20;
  static constexpr int64_t kTestVolumeExpandSize = int64_t{128} << 20;
  // The suite's MaxNameLength.
  static constexpr size_t kMaxNameLength = 128;

  void SetUp() override;
  // Resources.Cleanup, then the suite's teardown: the staging and target
  // directories must be left empty.
  void TearDown() override;

  // The suite's UniqueString: `prefix` plus a suffix unique to this run.
  static std::string Unique(const std::string& prefix);
  // UniqueStringWithLength: padded with 'a' to `length`.
  static std::string UniqueWithLength(const std::string& prefix, size_t length);
  // IDGen.GenerateUniqueValidVolumeID: the default generator's form
  // ("fake-vol-id-<10 chars>", which decodes to nothing) and a well-formed
  // ceph-csi ID of this cluster and pool naming no volume. Specs that take
  // one are run with both.
  static std::vector<std::string> AbsentVolumeIds();

  // sc.StagingPath and sc.TargetPath + "/target".
  static std::string SanityStagingPath() { return Root() + "/sanity-staging"; }
  static std::string SanityTargetDir() { return Root() + "/sanity-target"; }
  static std::string SanityTargetPath() { return SanityTargetDir() + "/target"; }

  static csi::v1::VolumeCapability Capability(Mode mode = csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  template <typename Request>
  static void AddSecrets(Request* r) {
    (*r->mutable_secrets())["userID"] = Ceph().user;
    (*r->mutable_secrets())["userKey"] = Ceph().key;
  }

  // The suite's Make*Req.
  static csi::v1::CreateVolumeRequest MakeCreateVolumeReq(const std::string& name);
  static csi::v1::CreateSnapshotRequest MakeCreateSnapshotReq(const std::string& name, const std::string& source);
  static csi::v1::NodeStageVolumeRequest MakeStageReq(const csi::v1::Volume& volume,
                                                      const csi::v1::VolumeCapability& cap);
  static csi::v1::NodePublishVolumeRequest MakePublishReq(const csi::v1::Volume& volume,
                                                          const csi::v1::VolumeCapability& cap,
                                                          const std::string& target);

  // Resources' wrappers: what succeeds is registered for cleanup (or, for
  // deletes, unregistered).
  grpc::Status CreateVolume(const csi::v1::CreateVolumeRequest& req, csi::v1::CreateVolumeResponse* resp);
  grpc::Status DeleteVolume(const std::string& volume_id);
  grpc::Status CreateSnapshot(const csi::v1::CreateSnapshotRequest& req, csi::v1::CreateSnapshotResponse* resp);
  grpc::Status DeleteSnapshot(const std::string& snapshot_id);
  // MustCreateVolume, MustCreateSnapshot and
  // MustCreateSnapshotFromVolumeRequest: false (and a failure recorded)
  // unless the call succeeded with the fields the suite checks.
  bool MustCreateVolume(const csi::v1::CreateVolumeRequest& req, csi::v1::Volume* out);
  bool MustCreateSnapshot(const csi::v1::CreateSnapshotRequest& req, csi::v1::Snapshot* out);
  bool MustCreateSnapshotFromNewVolume(const std::string& volume_name, const std::string& snapshot_name,
                                       csi::v1::Snapshot* out);

  // Plain calls (nothing to register).
  grpc::Status ListSnapshots(csi::v1::ListSnapshotsRequest req, csi::v1::ListSnapshotsResponse* resp);
  grpc::Status Validate(const csi::v1::ValidateVolumeCapabilitiesRequest& req,
                        csi::v1::ValidateVolumeCapabilitiesResponse* resp);
  grpc::Status ControllerExpand(const csi::v1::ControllerExpandVolumeRequest& req,
                                csi::v1::ControllerExpandVolumeResponse* resp);
  grpc::Status NodeStage(const csi::v1::NodeStageVolumeRequest& req);
  grpc::Status NodeUnstage(const csi::v1::NodeUnstageVolumeRequest& req);
  grpc::Status NodePublish(const csi::v1::NodePublishVolumeRequest& req);
  grpc::Status NodeUnpublish(const csi::v1::NodeUnpublishVolumeRequest& req);
  grpc::Status NodeStats(const csi::v1::NodeGetVolumeStatsRequest& req, csi::v1::NodeGetVolumeStatsResponse* resp);
  grpc::Status NodeExpand(const csi::v1::NodeExpandVolumeRequest& req);
  grpc::Status NodeInfo(csi::v1::NodeGetInfoResponse* resp);

  // The suite's verifySnapshotInfo.
  static void VerifySnapshotInfo(const csi::v1::Snapshot& s);

  // Takes `id` off this test's cleanup list: a suite that shares it across
  // its specs deletes it itself.
  void KeepAfterTest(const std::string& id) { Unregister(id); }

  std::unique_ptr<csi::v1::Identity::Stub> identity_;
  std::unique_ptr<csi::v1::Controller::Stub> controller_;

 private:
  struct Resource {
    std::string id;
    bool snapshot = false;
  };
  void Unregister(const std::string& id);

  std::vector<Resource> resources_;
};

// ExpectErrorCode: the call failed with `code`.
#define EXPECT_GRPC_CODE(expr, code)                                           \
  do {                                                                         \
    grpc::Status s_ = (expr);                                                  \
    EXPECT_EQ(s_.error_code(), (code)) << #expr << ": " << s_.error_message(); \
  } while (0)

}  // namespace nbdk::vmtest
