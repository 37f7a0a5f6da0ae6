#include "test/chaos/chaos_volume.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <filesystem>

namespace nbdk::chaos {
namespace {

csi::v1::VolumeCapability Capability(Access access) {
  csi::v1::VolumeCapability cap;
  if (access == Access::kBlock) {
    cap.mutable_block();
  } else {
    cap.mutable_mount()->set_fs_type(AccessName(access));
  }
  cap.mutable_access_mode()->set_mode(csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  return cap;
}

Status FromGrpc(const std::string& call, const ChaosVolume& v, const grpc::Status& s) {
  if (s.ok()) return Status::Ok();
  return Status::Internal(call + " " + v.id + ": gRPC code " + std::to_string(s.error_code()) + ": " +
                          s.error_message());
}

// A deadline on every call: a daemon that hangs fails the run, not CTest.
void SetDeadline(grpc::ClientContext& ctx) {
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(3));
}

}  // namespace

std::string AccessName(Access access) {
  switch (access) {
    case Access::kExt4:
      return "ext4";
    case Access::kXfs:
      return "xfs";
    case Access::kBlock:
      return "block";
  }
  return "?";
}

ChaosVolume MakeVolume(const std::string& root, const std::string& id, Access access) {
  ChaosVolume v;
  v.id = id;
  v.access = access;
  v.staging = root + "/staging/" + id;
  v.target = root + "/pods/" + id;
  return v;
}

Status Stage(csi::v1::Node::Stub& node, const vmtest::VmCeph& ceph, const ChaosVolume& v) {
  std::error_code ec;
  std::filesystem::create_directories(v.staging, ec);
  csi::v1::NodeStageVolumeRequest req = vmtest::StageRequest(ceph, kClusterId, v.id, v.staging);
  *req.mutable_volume_capability() = Capability(v.access);
  grpc::ClientContext ctx;
  SetDeadline(ctx);
  csi::v1::NodeStageVolumeResponse resp;
  return FromGrpc("NodeStageVolume", v, node.NodeStageVolume(&ctx, req, &resp));
}

Status Publish(csi::v1::Node::Stub& node, const ChaosVolume& v) {
  csi::v1::NodePublishVolumeRequest req;
  req.set_volume_id(v.id);
  req.set_staging_target_path(v.staging);
  req.set_target_path(v.target);
  *req.mutable_volume_capability() = Capability(v.access);
  grpc::ClientContext ctx;
  SetDeadline(ctx);
  csi::v1::NodePublishVolumeResponse resp;
  return FromGrpc("NodePublishVolume", v, node.NodePublishVolume(&ctx, req, &resp));
}

Status Unpublish(csi::v1::Node::Stub& node, const ChaosVolume& v) {
  csi::v1::NodeUnpublishVolumeRequest req;
  req.set_volume_id(v.id);
  req.set_target_path(v.target);
  grpc::ClientContext ctx;
  SetDeadline(ctx);
  csi::v1::NodeUnpublishVolumeResponse resp;
  return FromGrpc("NodeUnpublishVolume", v, node.NodeUnpublishVolume(&ctx, req, &resp));
}

Status Unstage(csi::v1::Node::Stub& node, const ChaosVolume& v) {
  csi::v1::NodeUnstageVolumeRequest req;
  req.set_volume_id(v.id);
  req.set_staging_target_path(v.staging);
  grpc::ClientContext ctx;
  SetDeadline(ctx);
  csi::v1::NodeUnstageVolumeResponse resp;
  return FromGrpc("NodeUnstageVolume", v, node.NodeUnstageVolume(&ctx, req, &resp));
}

}  // namespace nbdk::chaos
