// The Controller VM tests' fixture: a Controller stub on the VM's
// nbdkeeperd (NodeVmTest) and a librados connection of the test's own, to
// look at what the controller made.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "ceph/rados_cluster.h"
#include "test/csi/node_vm_fixture.h"

namespace nbdk::vmtest {

class ControllerVmTest : public NodeVmTest {
 protected:
  void SetUp() override {
    controller_ =
        csi::v1::Controller::NewStub(grpc::CreateChannel(Daemon().endpoint(), grpc::InsecureChannelCredentials()));
    RadosConfig rc{Ceph().conf, {}, Ceph().user, Ceph().keyfile, 30};
    auto cluster = RadosCluster::ConnectBlocking(rc);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    auto io = IoCtx::Open(*cluster, Ceph().pool, "");
    ASSERT_TRUE(io.ok()) << io.status().ToString();
    io_.emplace(std::move(*io));
  }

  template <typename Request>
  static void Secrets(Request* r) {
    (*r->mutable_secrets())["userID"] = Ceph().user;
    (*r->mutable_secrets())["userKey"] = Ceph().key;
  }

  // `image`: the nbdkeeper.io/imageName parameter, when not empty.
  grpc::Status Create(const std::string& name, int64_t bytes, csi::v1::CreateVolumeResponse* resp,
                      const std::string& image = "") {
    std::map<std::string, std::string> params;
    if (!image.empty()) params["nbdkeeper.io/imageName"] = image;
    return Create(name, bytes, params, resp);
  }

  // A CreateVolume request of an ext4 volume: StorageClass `params` besides
  // clusterID and pool, the test's secrets.
  static csi::v1::CreateVolumeRequest CreateRequest(const std::string& name, int64_t bytes,
                                                    const std::map<std::string, std::string>& params) {
    csi::v1::CreateVolumeRequest req;
    req.set_name(name);
    req.mutable_capacity_range()->set_required_bytes(bytes);
    *req.add_volume_capabilities() = MountCap("ext4");
    (*req.mutable_parameters())["clusterID"] = "test";
    (*req.mutable_parameters())["pool"] = Ceph().pool;
    for (const auto& [k, v] : params) (*req.mutable_parameters())[k] = v;
    Secrets(&req);
    return req;
  }

  grpc::Status Create(const csi::v1::CreateVolumeRequest& req, csi::v1::CreateVolumeResponse* resp) {
    grpc::ClientContext ctx;
    return controller_->CreateVolume(&ctx, req, resp);
  }

  grpc::Status Create(const std::string& name, int64_t bytes, const std::map<std::string, std::string>& params,
                      csi::v1::CreateVolumeResponse* resp) {
    return Create(CreateRequest(name, bytes, params), resp);
  }

  grpc::Status Delete(const std::string& volume_id) {
    csi::v1::DeleteVolumeRequest req;
    req.set_volume_id(volume_id);
    Secrets(&req);
    grpc::ClientContext ctx;
    csi::v1::DeleteVolumeResponse resp;
    return controller_->DeleteVolume(&ctx, req, &resp);
  }

  // CreateSnapshot of `volume_id` with the test's secrets; its ID in `snapshot_id`.
  grpc::Status Snapshot(const std::string& name, const std::string& volume_id, std::string* snapshot_id) {
    csi::v1::CreateSnapshotRequest req;
    req.set_name(name);
    req.set_source_volume_id(volume_id);
    Secrets(&req);
    grpc::ClientContext ctx;
    csi::v1::CreateSnapshotResponse resp;
    grpc::Status s = controller_->CreateSnapshot(&ctx, req, &resp);
    *snapshot_id = resp.snapshot().snapshot_id();
    return s;
  }

  grpc::Status DeleteSnapshot(const std::string& snapshot_id) {
    csi::v1::DeleteSnapshotRequest req;
    req.set_snapshot_id(snapshot_id);
    Secrets(&req);
    grpc::ClientContext ctx;
    csi::v1::DeleteSnapshotResponse resp;
    return controller_->DeleteSnapshot(&ctx, req, &resp);
  }

  grpc::Status Validate(const std::string& volume_id, csi::v1::ValidateVolumeCapabilitiesResponse* resp) {
    csi::v1::ValidateVolumeCapabilitiesRequest req;
    req.set_volume_id(volume_id);
    *req.add_volume_capabilities() = MountCap("ext4");
    Secrets(&req);
    grpc::ClientContext ctx;
    return controller_->ValidateVolumeCapabilities(&ctx, req, resp);
  }

  grpc::Status Expand(const std::string& volume_id, int64_t bytes, const csi::v1::VolumeCapability& cap,
                      csi::v1::ControllerExpandVolumeResponse* resp) {
    csi::v1::ControllerExpandVolumeRequest req;
    req.set_volume_id(volume_id);
    req.mutable_capacity_range()->set_required_bytes(bytes);
    *req.mutable_volume_capability() = cap;
    Secrets(&req);
    grpc::ClientContext ctx;
    return controller_->ControllerExpandVolume(&ctx, req, resp);
  }

  // NodeExpandVolume of the volume staged at StagingPath(volume_id) and
  // published at `target`.
  grpc::Status NodeExpand(const std::string& volume_id, const std::string& target, int64_t bytes,
                          const csi::v1::VolumeCapability& cap, csi::v1::NodeExpandVolumeResponse* resp) {
    csi::v1::NodeExpandVolumeRequest req;
    req.set_volume_id(volume_id);
    req.set_volume_path(target);
    req.set_staging_target_path(StagingPath(volume_id));
    req.mutable_capacity_range()->set_required_bytes(bytes);
    *req.mutable_volume_capability() = cap;
    grpc::ClientContext ctx;
    return Node()->NodeExpandVolume(&ctx, req, resp);
  }

  std::unique_ptr<csi::v1::Controller::Stub> controller_;
  std::optional<IoCtx> io_;
};

}  // namespace nbdk::vmtest
