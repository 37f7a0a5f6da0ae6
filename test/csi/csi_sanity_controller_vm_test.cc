// The CSI sanity suite's Identity Service specs and the Controller Service
// specs for volumes (csi-test pkg/sanity identity.go, controller.go). Each
// test names its spec: suite = Describe, comment = It.
#include <regex>
#include <set>

#include "test/csi/csi_sanity_vm_fixture.h"

namespace nbdk::vmtest {
namespace {

using AccessMode = csi::v1::VolumeCapability::AccessMode;
using Rpc = csi::v1::ControllerServiceCapability::RPC;

class SanityIdentity : public CsiSanityVmTest {};

// "Identity Service GetPluginCapabilities should return appropriate
// capabilities": every capability is a type the suite knows.
TEST_F(SanityIdentity, GetPluginCapabilitiesReturnsAppropriateCapabilities) {
  grpc::ClientContext ctx;
  csi::v1::GetPluginCapabilitiesResponse resp;
  ASSERT_GRPC_OK(identity_->GetPluginCapabilities(&ctx, {}, &resp));
  std::set<std::string> got;
  for (const auto& cap : resp.capabilities()) {
    if (cap.has_service()) {
      EXPECT_NE(cap.service().type(), csi::v1::PluginCapability::Service::UNKNOWN);
      got.insert("service " + csi::v1::PluginCapability::Service::Type_Name(cap.service().type()));
    } else if (cap.has_volume_expansion()) {
      EXPECT_NE(cap.volume_expansion().type(), csi::v1::PluginCapability::VolumeExpansion::UNKNOWN);
      got.insert("expansion " + csi::v1::PluginCapability::VolumeExpansion::Type_Name(cap.volume_expansion().type()));
    } else {
      ADD_FAILURE() << "unknown capability: " << cap.ShortDebugString();
    }
  }
  // What the README's table of skipped specs assumes: no
  // VOLUME_ACCESSIBILITY_CONSTRAINTS, no GROUP_CONTROLLER_SERVICE.
  EXPECT_EQ(got, (std::set<std::string>{"service CONTROLLER_SERVICE", "expansion ONLINE"}));
}

// "Identity Service Probe should return appropriate information": OK (or
// FAILED_PRECONDITION); ready, once the daemon is ready.
TEST_F(SanityIdentity, ProbeReturnsAppropriateInformation) {
  grpc::ClientContext ctx;
  csi::v1::ProbeResponse resp;
  ASSERT_GRPC_OK(identity_->Probe(&ctx, {}, &resp));
  EXPECT_TRUE(resp.has_ready() && resp.ready().value());
}

// "Identity Service GetPluginInfo should return appropriate information":
// a name of 1..63 characters matching the suite's pattern.
TEST_F(SanityIdentity, GetPluginInfoReturnsAppropriateInformation) {
  grpc::ClientContext ctx;
  csi::v1::GetPluginInfoResponse resp;
  ASSERT_GRPC_OK(identity_->GetPluginInfo(&ctx, {}, &resp));
  EXPECT_FALSE(resp.name().empty());
  EXPECT_LE(resp.name().size(), 63u);
  EXPECT_TRUE(std::regex_match(resp.name(), std::regex(R"(^[a-zA-Z][A-Za-z0-9\-._]{0,61}[a-zA-Z]$)"))) << resp.name();
}

class SanityControllerGetCapabilities : public CsiSanityVmTest {};

// "Controller Service ControllerGetCapabilities should return appropriate
// capabilities"; and exactly the set the README's skip table assumes.
TEST_F(SanityControllerGetCapabilities, ReturnsAppropriateCapabilities) {
  grpc::ClientContext ctx;
  csi::v1::ControllerGetCapabilitiesResponse resp;
  ASSERT_GRPC_OK(controller_->ControllerGetCapabilities(&ctx, {}, &resp));
  std::set<int> got;
  for (const auto& cap : resp.capabilities()) {
    ASSERT_TRUE(cap.has_rpc()) << cap.ShortDebugString();
    EXPECT_TRUE(Rpc::Type_IsValid(cap.rpc().type()) && cap.rpc().type() != Rpc::UNKNOWN);
    got.insert(cap.rpc().type());
  }
  EXPECT_EQ(got, (std::set<int>{Rpc::CREATE_DELETE_VOLUME, Rpc::EXPAND_VOLUME, Rpc::CREATE_DELETE_SNAPSHOT,
                                Rpc::LIST_SNAPSHOTS, Rpc::CLONE_VOLUME}));
}

class SanityCreateVolume : public CsiSanityVmTest {};

// "CreateVolume should fail when no name is provided"
TEST_F(SanityCreateVolume, FailsWhenNoNameIsProvided) {
  csi::v1::CreateVolumeRequest req = MakeCreateVolumeReq("");
  req.clear_volume_capabilities();
  req.clear_capacity_range();
  csi::v1::CreateVolumeResponse resp;
  EXPECT_GRPC_CODE(CreateVolume(req, &resp), Code::INVALID_ARGUMENT);
}

// "CreateVolume should fail when no volume capabilities are provided"
TEST_F(SanityCreateVolume, FailsWhenNoVolumeCapabilitiesAreProvided) {
  csi::v1::CreateVolumeRequest req = MakeCreateVolumeReq(Unique("sanity-controller-create-no-volume-capabilities"));
  req.clear_volume_capabilities();
  req.clear_capacity_range();
  csi::v1::CreateVolumeResponse resp;
  EXPECT_GRPC_CODE(CreateVolume(req, &resp), Code::INVALID_ARGUMENT);
}

// "CreateVolume should return appropriate values SingleNodeWriter
// NoCapacity": the suite sends its test size (a FIXME keeps the capacity);
// here also without any capacity range, as the name says (ceph-csi's 1 GiB).
TEST_F(SanityCreateVolume, ReturnsAppropriateValuesSingleNodeWriterNoCapacity) {
  csi::v1::Volume vol;
  ASSERT_TRUE(MustCreateVolume(MakeCreateVolumeReq(Unique("sanity-controller-create-single-no-capacity")), &vol));
  csi::v1::CreateVolumeRequest req = MakeCreateVolumeReq(Unique("sanity-controller-create-single-nil-capacity"));
  req.clear_capacity_range();
  ASSERT_TRUE(MustCreateVolume(req, &vol));
  EXPECT_EQ(vol.capacity_bytes(), int64_t{1} << 30);
}

// "CreateVolume should return appropriate values SingleNodeWriter
// WithCapacity 1Gi": at least the requested size (the suite's test size).
TEST_F(SanityCreateVolume, ReturnsAppropriateValuesSingleNodeWriterWithCapacity1Gi) {
  csi::v1::CreateVolumeResponse resp;
  ASSERT_GRPC_OK(CreateVolume(MakeCreateVolumeReq(Unique("sanity-controller-create-single-with-capacity")), &resp));
  EXPECT_FALSE(resp.volume().volume_id().empty());
  EXPECT_GE(resp.volume().capacity_bytes(), kTestVolumeSize);
}

// "CreateVolume should not fail when requesting to create a volume with
// already existing name and same capacity": the same volume ID.
TEST_F(SanityCreateVolume, NotFailWithAlreadyExistingNameAndSameCapacity) {
  const std::string name = Unique("sanity-controller-create-twice");
  csi::v1::Volume vol1, vol2;
  ASSERT_TRUE(MustCreateVolume(MakeCreateVolumeReq(name), &vol1));
  EXPECT_GE(vol1.capacity_bytes(), kTestVolumeSize);
  ASSERT_TRUE(MustCreateVolume(MakeCreateVolumeReq(name), &vol2));
  EXPECT_GE(vol2.capacity_bytes(), kTestVolumeSize);
  EXPECT_EQ(vol1.volume_id(), vol2.volume_id());
}

// "CreateVolume should fail when requesting to create a volume with already
// existing name and different capacity": exactly the size asked with a
// limit, then ALREADY_EXISTS for twice that.
TEST_F(SanityCreateVolume, FailsWithAlreadyExistingNameAndDifferentCapacity) {
  const std::string name = Unique("sanity-controller-create-twice-different");
  csi::v1::CreateVolumeRequest req1 = MakeCreateVolumeReq(name);
  req1.mutable_capacity_range()->set_limit_bytes(kTestVolumeSize);
  csi::v1::Volume vol1;
  ASSERT_TRUE(MustCreateVolume(req1, &vol1));
  EXPECT_EQ(vol1.capacity_bytes(), kTestVolumeSize);
  csi::v1::CreateVolumeRequest req2 = MakeCreateVolumeReq(name);
  req2.mutable_capacity_range()->set_required_bytes(2 * kTestVolumeSize);
  req2.mutable_capacity_range()->set_limit_bytes(2 * kTestVolumeSize);
  csi::v1::CreateVolumeResponse resp;
  EXPECT_GRPC_CODE(CreateVolume(req2, &resp), Code::ALREADY_EXISTS);
}

// "CreateVolume should not fail when creating volume with maximum-length name"
TEST_F(SanityCreateVolume, NotFailWithMaximumLengthName) {
  csi::v1::Volume vol;
  ASSERT_TRUE(MustCreateVolume(
      MakeCreateVolumeReq(UniqueWithLength("sanity-controller-create-maxlen", kMaxNameLength)), &vol));
  EXPECT_GE(vol.capacity_bytes(), kTestVolumeSize);
}

// "CreateVolume should create volume from an existing source snapshot":
// the snapshot is ready at once, and the volume names its content source.
TEST_F(SanityCreateVolume, CreatesVolumeFromAnExistingSourceSnapshot) {
  csi::v1::Volume vol1;
  ASSERT_TRUE(MustCreateVolume(MakeCreateVolumeReq(Unique("sanity-controller-source-vol")), &vol1));
  csi::v1::Snapshot snap;
  ASSERT_TRUE(MustCreateSnapshot(MakeCreateSnapshotReq(Unique("sanity-controller-snap-from-vol"), vol1.volume_id()),
                                 &snap));
  EXPECT_TRUE(snap.ready_to_use()) << "the suite would poll every 5 s";
  csi::v1::CreateVolumeRequest req = MakeCreateVolumeReq(Unique("sanity-controller-vol-from-snap"));
  req.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(snap.snapshot_id());
  csi::v1::CreateVolumeResponse resp;
  ASSERT_GRPC_OK(CreateVolume(req, &resp));
  EXPECT_TRUE(resp.volume().has_content_source());
}

// "CreateVolume should fail when the volume source snapshot is not found"
TEST_F(SanityCreateVolume, FailsWhenTheVolumeSourceSnapshotIsNotFound) {
  csi::v1::CreateVolumeRequest req = MakeCreateVolumeReq(Unique("sanity-controller-vol-from-snap"));
  req.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id("non-existing-snapshot-id");
  csi::v1::CreateVolumeResponse resp;
  EXPECT_GRPC_CODE(CreateVolume(req, &resp), Code::NOT_FOUND);
}

// "CreateVolume should create volume from an existing source volume"
TEST_F(SanityCreateVolume, CreatesVolumeFromAnExistingSourceVolume) {
  csi::v1::Volume vol1;
  ASSERT_TRUE(MustCreateVolume(MakeCreateVolumeReq(Unique("sanity-controller-source-vol")), &vol1));
  csi::v1::CreateVolumeRequest req = MakeCreateVolumeReq(Unique("sanity-controller-vol-from-vol"));
  req.mutable_volume_content_source()->mutable_volume()->set_volume_id(vol1.volume_id());
  csi::v1::CreateVolumeResponse resp;
  ASSERT_GRPC_OK(CreateVolume(req, &resp));
}

// "CreateVolume should fail when the volume source volume is not found"
TEST_F(SanityCreateVolume, FailsWhenTheVolumeSourceVolumeIsNotFound) {
  for (const std::string& absent : AbsentVolumeIds()) {
    SCOPED_TRACE(absent);
    csi::v1::CreateVolumeRequest req = MakeCreateVolumeReq(Unique("sanity-controller-vol-from-snap"));
    req.mutable_volume_content_source()->mutable_volume()->set_volume_id(absent);
    csi::v1::CreateVolumeResponse resp;
    EXPECT_GRPC_CODE(CreateVolume(req, &resp), Code::NOT_FOUND);
  }
}

class SanityDeleteVolume : public CsiSanityVmTest {};

// "DeleteVolume should fail when no volume id is provided"
TEST_F(SanityDeleteVolume, FailsWhenNoVolumeIdIsProvided) {
  EXPECT_GRPC_CODE(DeleteVolume(""), Code::INVALID_ARGUMENT);
}

// "DeleteVolume should succeed when an invalid volume id is used"
// (IDGen.GenerateInvalidVolumeID); and for a well-formed one naming nothing.
TEST_F(SanityDeleteVolume, SucceedsWhenAnInvalidVolumeIdIsUsed) {
  EXPECT_GRPC_OK(DeleteVolume("fake-vol-id"));
  EXPECT_GRPC_OK(DeleteVolume(AbsentVolumeIds().back()));
}

// "DeleteVolume should return appropriate values (no optional values added)"
TEST_F(SanityDeleteVolume, ReturnsAppropriateValues) {
  csi::v1::Volume vol;
  ASSERT_TRUE(MustCreateVolume(MakeCreateVolumeReq(Unique("sanity-controller-create-appropriate")), &vol));
  EXPECT_GRPC_OK(DeleteVolume(vol.volume_id()));
}

class SanityValidateVolumeCapabilities : public CsiSanityVmTest {
 protected:
  csi::v1::ValidateVolumeCapabilitiesRequest Request(const std::string& volume_id) {
    csi::v1::ValidateVolumeCapabilitiesRequest req;
    req.set_volume_id(volume_id);
    *req.add_volume_capabilities() = Capability();
    AddSecrets(&req);
    return req;
  }
};

// "ValidateVolumeCapabilities should fail when no volume id is provided"
TEST_F(SanityValidateVolumeCapabilities, FailsWhenNoVolumeIdIsProvided) {
  csi::v1::ValidateVolumeCapabilitiesRequest req;
  AddSecrets(&req);
  csi::v1::ValidateVolumeCapabilitiesResponse resp;
  EXPECT_GRPC_CODE(Validate(req, &resp), Code::INVALID_ARGUMENT);
}

// "ValidateVolumeCapabilities should fail when no volume capabilities are provided"
TEST_F(SanityValidateVolumeCapabilities, FailsWhenNoVolumeCapabilitiesAreProvided) {
  csi::v1::Volume vol;
  ASSERT_TRUE(MustCreateVolume(MakeCreateVolumeReq(Unique("sanity-controller-validate-nocaps")), &vol));
  csi::v1::ValidateVolumeCapabilitiesRequest req = Request(vol.volume_id());
  req.clear_volume_capabilities();
  csi::v1::ValidateVolumeCapabilitiesResponse resp;
  EXPECT_GRPC_CODE(Validate(req, &resp), Code::INVALID_ARGUMENT);
}

// "ValidateVolumeCapabilities should return appropriate values (no optional
// values added)": when confirmed, the capabilities are there.
TEST_F(SanityValidateVolumeCapabilities, ReturnsAppropriateValues) {
  csi::v1::Volume vol;
  ASSERT_TRUE(MustCreateVolume(MakeCreateVolumeReq(Unique("sanity-controller-validate")), &vol));
  csi::v1::ValidateVolumeCapabilitiesResponse resp;
  ASSERT_GRPC_OK(Validate(Request(vol.volume_id()), &resp));
  ASSERT_TRUE(resp.has_confirmed()) << resp.message();
  EXPECT_FALSE(resp.confirmed().volume_capabilities().empty());
}

// "ValidateVolumeCapabilities should fail when the requested volume does not exist"
TEST_F(SanityValidateVolumeCapabilities, FailsWhenTheRequestedVolumeDoesNotExist) {
  for (const std::string& absent : AbsentVolumeIds()) {
    SCOPED_TRACE(absent);
    csi::v1::ValidateVolumeCapabilitiesResponse resp;
    EXPECT_GRPC_CODE(Validate(Request(absent), &resp), Code::NOT_FOUND);
  }
}

class SanityExpandVolume : public CsiSanityVmTest {
 protected:
  // MakeExpandVolumeReq.
  static csi::v1::ControllerExpandVolumeRequest Request(const std::string& volume_id) {
    csi::v1::ControllerExpandVolumeRequest req;
    req.set_volume_id(volume_id);
    req.mutable_capacity_range()->set_required_bytes(kTestVolumeExpandSize);
    *req.mutable_volume_capability() = Capability();
    AddSecrets(&req);
    return req;
  }
};

// "ExpandVolume [Controller Server] should fail if no volume id is given"
TEST_F(SanityExpandVolume, FailsIfNoVolumeIdIsGiven) {
  csi::v1::ControllerExpandVolumeResponse resp;
  EXPECT_GRPC_CODE(ControllerExpand(Request(""), &resp), Code::INVALID_ARGUMENT);
}

// "ExpandVolume [Controller Server] should fail if no capacity range is
// given" (the suite also leaves the volume ID empty); and with a real one.
TEST_F(SanityExpandVolume, FailsIfNoCapacityRangeIsGiven) {
  csi::v1::ControllerExpandVolumeRequest req;
  AddSecrets(&req);
  csi::v1::ControllerExpandVolumeResponse resp;
  EXPECT_GRPC_CODE(ControllerExpand(req, &resp), Code::INVALID_ARGUMENT);
  csi::v1::Volume vol;
  ASSERT_TRUE(MustCreateVolume(MakeCreateVolumeReq(Unique("sanity-expand-no-range")), &vol));
  req = Request(vol.volume_id());
  req.clear_capacity_range();
  EXPECT_GRPC_CODE(ControllerExpand(req, &resp), Code::INVALID_ARGUMENT);
}

// "ExpandVolume [Controller Server] should work": exactly the size asked.
TEST_F(SanityExpandVolume, Works) {
  csi::v1::Volume vol;
  ASSERT_TRUE(MustCreateVolume(MakeCreateVolumeReq(Unique("sanity-expand-volume")), &vol));
  csi::v1::ControllerExpandVolumeResponse resp;
  ASSERT_GRPC_OK(ControllerExpand(Request(vol.volume_id()), &resp));
  EXPECT_EQ(resp.capacity_bytes(), kTestVolumeExpandSize);
}

}  // namespace
}  // namespace nbdk::vmtest
