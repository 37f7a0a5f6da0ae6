// The CSI sanity suite's Node Service specs (csi-test pkg/sanity node.go),
// with the capabilities nbdkeeper advertises: STAGE_UNSTAGE_VOLUME,
// GET_VOLUME_STATS, EXPAND_VOLUME, VOLUME_CONDITION,
// SINGLE_NODE_MULTI_WRITER; a Controller service without
// PUBLISH_UNPUBLISH_VOLUME (so no ControllerPublish in between). Each test
// names its spec: suite = Describe, comment = It.
#include <filesystem>
#include <set>

#include "test/csi/csi_sanity_vm_fixture.h"

namespace nbdk::vmtest {
namespace {

using AccessMode = csi::v1::VolumeCapability::AccessMode;
using NodeRpc = csi::v1::NodeServiceCapability::RPC;

class SanityNode : public CsiSanityVmTest {
 protected:
  // createVolume + nodeStageVolume + nodePublishVolume with `cap`.
  bool CreateStagePublish(const std::string& name, const csi::v1::VolumeCapability& cap, csi::v1::Volume* vol) {
    csi::v1::CreateVolumeRequest req = MakeCreateVolumeReq(name);
    *req.mutable_volume_capabilities(0) = cap;
    if (!MustCreateVolume(req, vol)) return false;
    grpc::Status s = NodeStage(MakeStageReq(*vol, cap));
    EXPECT_TRUE(s.ok()) << "NodeStageVolume: " << s.error_message();
    if (!s.ok()) return false;
    s = NodePublish(MakePublishReq(*vol, cap, SanityTargetPath()));
    EXPECT_TRUE(s.ok()) << "NodePublishVolume: " << s.error_message();
    return s.ok();
  }

  // runControllerTest(count): create, stage `count` times, publish `count`
  // times, then NodeGetVolumeStats on the target reports usage.
  void RunControllerTest(int count) {
    csi::v1::NodeGetInfoResponse info;
    ASSERT_GRPC_OK(NodeInfo(&info));
    ASSERT_FALSE(info.node_id().empty());
    csi::v1::Volume vol;
    ASSERT_TRUE(MustCreateVolume(MakeCreateVolumeReq(Unique("sanity-node-full-" + std::to_string(count))), &vol));
    for (int i = 0; i < count; ++i) ASSERT_GRPC_OK(NodeStage(MakeStageReq(vol, Capability())));
    for (int i = 0; i < count; ++i) ASSERT_GRPC_OK(NodePublish(MakePublishReq(vol, Capability(), SanityTargetPath())));
    csi::v1::NodeGetVolumeStatsRequest req;
    req.set_volume_id(vol.volume_id());
    req.set_volume_path(SanityTargetPath());
    csi::v1::NodeGetVolumeStatsResponse stats;
    ASSERT_GRPC_OK(NodeStats(req, &stats));
    EXPECT_FALSE(stats.usage().empty());
  }
};

class SanityNodeGetCapabilities : public SanityNode {};

// "Node Service NodeGetCapabilities should return appropriate capabilities";
// and exactly the set the README's skip table assumes.
TEST_F(SanityNodeGetCapabilities, ReturnsAppropriateCapabilities) {
  grpc::ClientContext ctx;
  csi::v1::NodeGetCapabilitiesResponse resp;
  ASSERT_GRPC_OK(Node()->NodeGetCapabilities(&ctx, {}, &resp));
  std::set<int> got;
  for (const auto& cap : resp.capabilities()) {
    ASSERT_TRUE(cap.has_rpc()) << cap.ShortDebugString();
    EXPECT_TRUE(NodeRpc::Type_IsValid(cap.rpc().type()));
    got.insert(cap.rpc().type());
  }
  EXPECT_EQ(got, (std::set<int>{NodeRpc::STAGE_UNSTAGE_VOLUME, NodeRpc::GET_VOLUME_STATS, NodeRpc::EXPAND_VOLUME,
                                NodeRpc::VOLUME_CONDITION, NodeRpc::SINGLE_NODE_MULTI_WRITER}));
}

class SanityNodeGetInfo : public SanityNode {};

// "Node Service NodeGetInfo should return appropriate values": a node ID,
// max_volumes_per_node >= 0 (no topology: not advertised).
TEST_F(SanityNodeGetInfo, ReturnsAppropriateValues) {
  csi::v1::NodeGetInfoResponse info;
  ASSERT_GRPC_OK(NodeInfo(&info));
  EXPECT_FALSE(info.node_id().empty());
  EXPECT_GE(info.max_volumes_per_node(), 0);
}

class SanityNodePublishVolume : public SanityNode {};

// "Node Service NodePublishVolume should fail when no volume id is provided"
TEST_F(SanityNodePublishVolume, FailsWhenNoVolumeIdIsProvided) {
  EXPECT_GRPC_CODE(NodePublish({}), Code::INVALID_ARGUMENT);
}

// "Node Service NodePublishVolume should fail when no target path is provided"
TEST_F(SanityNodePublishVolume, FailsWhenNoTargetPathIsProvided) {
  for (const std::string& absent : AbsentVolumeIds()) {
    SCOPED_TRACE(absent);
    csi::v1::NodePublishVolumeRequest req;
    req.set_volume_id(absent);
    EXPECT_GRPC_CODE(NodePublish(req), Code::INVALID_ARGUMENT);
  }
}

// "Node Service NodePublishVolume should fail when no volume capability is provided"
TEST_F(SanityNodePublishVolume, FailsWhenNoVolumeCapabilityIsProvided) {
  for (const std::string& absent : AbsentVolumeIds()) {
    SCOPED_TRACE(absent);
    csi::v1::NodePublishVolumeRequest req;
    req.set_volume_id(absent);
    req.set_target_path(SanityTargetPath());
    EXPECT_GRPC_CODE(NodePublish(req), Code::INVALID_ARGUMENT);
  }
}

// "Node Service NodePublishVolume with single node multi writer capability
// should fail when volume with single node single writer access mode is
// already mounted at a different target path"
TEST_F(SanityNodePublishVolume, FailsWhenSingleNodeSingleWriterVolumeIsAlreadyMountedAtADifferentTargetPath) {
  const csi::v1::VolumeCapability cap = Capability(AccessMode::SINGLE_NODE_SINGLE_WRITER);
  csi::v1::Volume vol;
  ASSERT_TRUE(CreateStagePublish(Unique("sanity-node-publish-single-node-single-writer"), cap, &vol));
  const std::string other = SanityTargetDir() + "/other_target";
  EXPECT_GRPC_CODE(NodePublish(MakePublishReq(vol, cap, other)), Code::FAILED_PRECONDITION);
  if (std::filesystem::exists(other)) {  // published after all: undo, so the cleanup can unstage
    csi::v1::NodeUnpublishVolumeRequest req;
    req.set_volume_id(vol.volume_id());
    req.set_target_path(other);
    EXPECT_GRPC_OK(NodeUnpublish(req));
  }
}

class SanityNodeUnpublishVolume : public SanityNode {};

// "Node Service NodeUnpublishVolume should fail when no volume id is provided"
TEST_F(SanityNodeUnpublishVolume, FailsWhenNoVolumeIdIsProvided) {
  EXPECT_GRPC_CODE(NodeUnpublish({}), Code::INVALID_ARGUMENT);
}

// "Node Service NodeUnpublishVolume should fail when no target path is provided"
TEST_F(SanityNodeUnpublishVolume, FailsWhenNoTargetPathIsProvided) {
  for (const std::string& absent : AbsentVolumeIds()) {
    SCOPED_TRACE(absent);
    csi::v1::NodeUnpublishVolumeRequest req;
    req.set_volume_id(absent);
    EXPECT_GRPC_CODE(NodeUnpublish(req), Code::INVALID_ARGUMENT);
  }
}

// "Node Service NodeUnpublishVolume should remove target path": the driver
// made it on publish and removes it on unpublish.
TEST_F(SanityNodeUnpublishVolume, RemovesTargetPath) {
  csi::v1::Volume vol;
  ASSERT_TRUE(CreateStagePublish(Unique("sanity-node-unpublish-volume"), Capability(), &vol));
  ASSERT_TRUE(std::filesystem::exists(SanityTargetPath()));
  csi::v1::NodeUnpublishVolumeRequest req;
  req.set_volume_id(vol.volume_id());
  req.set_target_path(SanityTargetPath());
  ASSERT_GRPC_OK(NodeUnpublish(req));
  EXPECT_FALSE(std::filesystem::exists(SanityTargetPath()));
}

class SanityNodeStageVolume : public SanityNode {
 protected:
  // The suite's requests carry publish_context {"device": "/dev/mock"}.
  static csi::v1::NodeStageVolumeRequest WithMockDevice(csi::v1::NodeStageVolumeRequest req) {
    (*req.mutable_publish_context())["device"] = "/dev/mock";
    return req;
  }
};

// "Node Service NodeStageVolume should fail when no volume id is provided"
TEST_F(SanityNodeStageVolume, FailsWhenNoVolumeIdIsProvided) {
  csi::v1::NodeStageVolumeRequest req = WithMockDevice(MakeStageReq({}, Capability()));
  req.clear_volume_context();
  EXPECT_GRPC_CODE(NodeStage(req), Code::INVALID_ARGUMENT);
}

// "Node Service NodeStageVolume should fail when no staging target path is provided"
TEST_F(SanityNodeStageVolume, FailsWhenNoStagingTargetPathIsProvided) {
  for (const std::string& absent : AbsentVolumeIds()) {
    SCOPED_TRACE(absent);
    csi::v1::Volume vol;
    vol.set_volume_id(absent);
    csi::v1::NodeStageVolumeRequest req = WithMockDevice(MakeStageReq(vol, Capability()));
    req.clear_staging_target_path();
    EXPECT_GRPC_CODE(NodeStage(req), Code::INVALID_ARGUMENT);
  }
}

// "Node Service NodeStageVolume should fail when no volume capability is
// provided" (for a volume that exists)
TEST_F(SanityNodeStageVolume, FailsWhenNoVolumeCapabilityIsProvided) {
  csi::v1::Volume vol;
  ASSERT_TRUE(MustCreateVolume(MakeCreateVolumeReq(Unique("sanity-node-stage-nocaps")), &vol));
  csi::v1::NodeStageVolumeRequest req = WithMockDevice(MakeStageReq(vol, Capability()));
  req.clear_volume_capability();
  req.clear_volume_context();
  EXPECT_GRPC_CODE(NodeStage(req), Code::INVALID_ARGUMENT);
}

class SanityNodeUnstageVolume : public SanityNode {};

// "Node Service NodeUnstageVolume should fail when no volume id is provided"
TEST_F(SanityNodeUnstageVolume, FailsWhenNoVolumeIdIsProvided) {
  csi::v1::NodeUnstageVolumeRequest req;
  req.set_staging_target_path(SanityStagingPath());
  EXPECT_GRPC_CODE(NodeUnstage(req), Code::INVALID_ARGUMENT);
}

// "Node Service NodeUnstageVolume should fail when no staging target path is provided"
TEST_F(SanityNodeUnstageVolume, FailsWhenNoStagingTargetPathIsProvided) {
  for (const std::string& absent : AbsentVolumeIds()) {
    SCOPED_TRACE(absent);
    csi::v1::NodeUnstageVolumeRequest req;
    req.set_volume_id(absent);
    EXPECT_GRPC_CODE(NodeUnstage(req), Code::INVALID_ARGUMENT);
  }
}

class SanityNodeGetVolumeStats : public SanityNode {};

// "Node Service NodeGetVolumeStats should fail when no volume id is provided"
TEST_F(SanityNodeGetVolumeStats, FailsWhenNoVolumeIdIsProvided) {
  csi::v1::NodeGetVolumeStatsRequest req;
  req.set_volume_path("some/path");
  csi::v1::NodeGetVolumeStatsResponse resp;
  EXPECT_GRPC_CODE(NodeStats(req, &resp), Code::INVALID_ARGUMENT);
}

// "Node Service NodeGetVolumeStats should fail when no volume path is provided"
TEST_F(SanityNodeGetVolumeStats, FailsWhenNoVolumePathIsProvided) {
  for (const std::string& absent : AbsentVolumeIds()) {
    SCOPED_TRACE(absent);
    csi::v1::NodeGetVolumeStatsRequest req;
    req.set_volume_id(absent);
    csi::v1::NodeGetVolumeStatsResponse resp;
    EXPECT_GRPC_CODE(NodeStats(req, &resp), Code::INVALID_ARGUMENT);
  }
}

// "Node Service NodeGetVolumeStats should fail when volume is not found"
TEST_F(SanityNodeGetVolumeStats, FailsWhenVolumeIsNotFound) {
  for (const std::string& absent : AbsentVolumeIds()) {
    SCOPED_TRACE(absent);
    csi::v1::NodeGetVolumeStatsRequest req;
    req.set_volume_id(absent);
    req.set_volume_path("some/path");
    csi::v1::NodeGetVolumeStatsResponse resp;
    EXPECT_GRPC_CODE(NodeStats(req, &resp), Code::NOT_FOUND);
  }
}

// "Node Service NodeGetVolumeStats should fail when volume does not exist
// on the specified path": staged and published, asked about another path.
TEST_F(SanityNodeGetVolumeStats, FailsWhenVolumeDoesNotExistOnTheSpecifiedPath) {
  csi::v1::Volume vol;
  ASSERT_TRUE(CreateStagePublish(Unique("sanity-node-get-volume-stats"), Capability(), &vol));
  csi::v1::NodeGetVolumeStatsRequest req;
  req.set_volume_id(vol.volume_id());
  req.set_volume_path("some/path");
  csi::v1::NodeGetVolumeStatsResponse resp;
  EXPECT_GRPC_CODE(NodeStats(req, &resp), Code::NOT_FOUND);
}

class SanityNodeExpandVolume : public SanityNode {};

// "Node Service NodeExpandVolume should fail when no volume id is provided"
TEST_F(SanityNodeExpandVolume, FailsWhenNoVolumeIdIsProvided) {
  csi::v1::NodeExpandVolumeRequest req;
  req.set_volume_path(SanityTargetDir());
  *req.mutable_volume_capability() = Capability();
  EXPECT_GRPC_CODE(NodeExpand(req), Code::INVALID_ARGUMENT);
}

// "Node Service NodeExpandVolume should fail when no volume path is provided"
TEST_F(SanityNodeExpandVolume, FailsWhenNoVolumePathIsProvided) {
  csi::v1::Volume vol;
  ASSERT_TRUE(MustCreateVolume(MakeCreateVolumeReq(Unique("sanity-node-expand-volume-valid-id")), &vol));
  csi::v1::NodeExpandVolumeRequest req;
  req.set_volume_id(vol.volume_id());
  *req.mutable_volume_capability() = Capability();
  EXPECT_GRPC_CODE(NodeExpand(req), Code::INVALID_ARGUMENT);
}

// "Node Service NodeExpandVolume should fail when volume is not found"
TEST_F(SanityNodeExpandVolume, FailsWhenVolumeIsNotFound) {
  for (const std::string& absent : AbsentVolumeIds()) {
    SCOPED_TRACE(absent);
    csi::v1::NodeExpandVolumeRequest req;
    req.set_volume_id(absent);
    req.set_volume_path("some/path");
    EXPECT_GRPC_CODE(NodeExpand(req), Code::NOT_FOUND);
  }
}

// "Node Service NodeExpandVolume should work if node-expand is called after
// node-publish": ControllerExpand first (advertised), then stage, publish
// and expand on the node to the same size.
TEST_F(SanityNodeExpandVolume, WorksIfNodeExpandIsCalledAfterNodePublish) {
  csi::v1::Volume vol;
  ASSERT_TRUE(MustCreateVolume(MakeCreateVolumeReq(Unique("sanity-node-expand-volume")), &vol));
  csi::v1::ControllerExpandVolumeRequest expand;
  expand.set_volume_id(vol.volume_id());
  expand.mutable_capacity_range()->set_required_bytes(kTestVolumeExpandSize);
  AddSecrets(&expand);
  csi::v1::ControllerExpandVolumeResponse expanded;
  ASSERT_GRPC_OK(ControllerExpand(expand, &expanded));
  EXPECT_EQ(expanded.capacity_bytes(), kTestVolumeExpandSize);
  ASSERT_GRPC_OK(NodeStage(MakeStageReq(vol, Capability())));
  ASSERT_GRPC_OK(NodePublish(MakePublishReq(vol, Capability(), SanityTargetPath())));
  csi::v1::NodeExpandVolumeRequest req;
  req.set_volume_id(vol.volume_id());
  req.set_volume_path(SanityTargetPath());
  req.mutable_capacity_range()->set_required_bytes(kTestVolumeExpandSize);
  EXPECT_GRPC_OK(NodeExpand(req));
}

class SanityNodeService : public SanityNode {};

// "Node Service should work"
TEST_F(SanityNodeService, Works) { RunControllerTest(1); }

// "Node Service should be idempotent" (the suite's IdempotentCount, 10)
TEST_F(SanityNodeService, IsIdempotent) { RunControllerTest(10); }

}  // namespace
}  // namespace nbdk::vmtest
