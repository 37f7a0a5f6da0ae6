#include "test/csi/controller/sanity_style_fixture.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "ceph/rados_cluster.h"
#include "journal/volume_id.h"

namespace nbdk::vmtest {

void CsiSanityVmTest::SetUp() {
  auto channel = grpc::CreateChannel(Daemon().endpoint(), grpc::InsecureChannelCredentials());
  identity_ = csi::v1::Identity::NewStub(channel);
  controller_ = csi::v1::Controller::NewStub(channel);
  // The suite makes both directories before each spec; the target path
  // itself is the driver's to create.
  std::filesystem::create_directories(SanityStagingPath());
  std::filesystem::create_directories(SanityTargetDir());
}

void CsiSanityVmTest::TearDown() {
  for (auto it = resources_.rbegin(); it != resources_.rend(); ++it) {
    SCOPED_TRACE("cleanup of " + it->id);
    if (it->snapshot) {
      csi::v1::DeleteSnapshotRequest req;
      req.set_snapshot_id(it->id);
      AddSecrets(&req);
      grpc::ClientContext ctx;
      csi::v1::DeleteSnapshotResponse resp;
      EXPECT_GRPC_OK(controller_->DeleteSnapshot(&ctx, req, &resp));
      continue;
    }
    // isRelevantError: anything but OK and NOT_FOUND fails the cleanup.
    auto relevant = [](const grpc::Status& s) { return !s.ok() && s.error_code() != Code::NOT_FOUND; };
    csi::v1::NodeUnpublishVolumeRequest unpublish;
    unpublish.set_volume_id(it->id);
    unpublish.set_target_path(SanityTargetPath());
    grpc::Status s = NodeUnpublish(unpublish);
    EXPECT_FALSE(relevant(s)) << "NodeUnpublishVolume: " << s.error_code() << " " << s.error_message();
    csi::v1::NodeUnstageVolumeRequest unstage;
    unstage.set_volume_id(it->id);
    unstage.set_staging_target_path(SanityStagingPath());
    s = NodeUnstage(unstage);
    EXPECT_FALSE(relevant(s)) << "NodeUnstageVolume: " << s.error_code() << " " << s.error_message();
    csi::v1::DeleteVolumeRequest del;
    del.set_volume_id(it->id);
    AddSecrets(&del);
    grpc::ClientContext ctx;
    csi::v1::DeleteVolumeResponse resp;
    EXPECT_GRPC_OK(controller_->DeleteVolume(&ctx, del, &resp));
  }
  resources_.clear();
  // The suite removes both directories with os.Remove: the driver must
  // have left nothing in them.
  std::error_code ec;
  std::filesystem::remove(SanityTargetDir(), ec);
  EXPECT_FALSE(ec) << SanityTargetDir() << " is not empty: " << ec.message();
  std::filesystem::remove(SanityStagingPath(), ec);
  EXPECT_FALSE(ec) << SanityStagingPath() << " is not empty: " << ec.message();
}

std::string CsiSanityVmTest::Unique(const std::string& prefix) { return prefix + "-" + std::to_string(::getpid()); }

std::string CsiSanityVmTest::UniqueWithLength(const std::string& prefix, size_t length) {
  std::string s = Unique(prefix);
  s.resize(std::max(length, s.size()), 'a');
  return s;
}

std::vector<std::string> CsiSanityVmTest::AbsentVolumeIds() {
  static const std::string well_formed = [] {
    RadosConfig rc{Ceph().conf, {}, Ceph().user, Ceph().keyfile, 30};
    auto cluster = RadosCluster::ConnectBlocking(rc);
    if (!cluster.ok()) return std::string();
    auto pool_id = (*cluster)->PoolId(Ceph().pool);
    if (!pool_id.ok()) return std::string();
    return EncodeVolumeId(
        VolumeId{.cluster_id = "test", .pool_id = *pool_id, .object_uuid = "00000000-0000-4000-8000-00000000dead"});
  }();
  EXPECT_FALSE(well_formed.empty()) << "could not read the pool's ID";
  return {"fake-vol-id-" + std::to_string(::getpid()), well_formed};
}

csi::v1::VolumeCapability CsiSanityVmTest::Capability(Mode mode) {
  csi::v1::VolumeCapability cap;
  cap.mutable_mount();
  cap.mutable_access_mode()->set_mode(mode);
  return cap;
}

csi::v1::CreateVolumeRequest CsiSanityVmTest::MakeCreateVolumeReq(const std::string& name) {
  csi::v1::CreateVolumeRequest req;
  req.set_name(name);
  *req.add_volume_capabilities() = Capability();
  req.mutable_capacity_range()->set_required_bytes(kTestVolumeSize);
  (*req.mutable_parameters())["clusterID"] = "test";
  (*req.mutable_parameters())["pool"] = Ceph().pool;
  AddSecrets(&req);
  return req;
}

csi::v1::CreateSnapshotRequest CsiSanityVmTest::MakeCreateSnapshotReq(const std::string& name,
                                                                      const std::string& source) {
  csi::v1::CreateSnapshotRequest req;
  req.set_name(name);
  req.set_source_volume_id(source);
  (*req.mutable_parameters())["clusterID"] = "test";
  AddSecrets(&req);
  return req;
}

csi::v1::NodeStageVolumeRequest CsiSanityVmTest::MakeStageReq(const csi::v1::Volume& volume,
                                                              const csi::v1::VolumeCapability& cap) {
  csi::v1::NodeStageVolumeRequest req;
  req.set_volume_id(volume.volume_id());
  req.set_staging_target_path(SanityStagingPath());
  *req.mutable_volume_capability() = cap;
  *req.mutable_volume_context() = volume.volume_context();
  AddSecrets(&req);
  return req;
}

csi::v1::NodePublishVolumeRequest CsiSanityVmTest::MakePublishReq(const csi::v1::Volume& volume,
                                                                  const csi::v1::VolumeCapability& cap,
                                                                  const std::string& target) {
  csi::v1::NodePublishVolumeRequest req;
  req.set_volume_id(volume.volume_id());
  req.set_staging_target_path(SanityStagingPath());
  req.set_target_path(target);
  *req.mutable_volume_capability() = cap;
  *req.mutable_volume_context() = volume.volume_context();
  return req;
}

grpc::Status CsiSanityVmTest::CreateVolume(const csi::v1::CreateVolumeRequest& req,
                                           csi::v1::CreateVolumeResponse* resp) {
  grpc::ClientContext ctx;
  grpc::Status s = controller_->CreateVolume(&ctx, req, resp);
  if (s.ok() && !resp->volume().volume_id().empty()) resources_.push_back({resp->volume().volume_id(), false});
  return s;
}

grpc::Status CsiSanityVmTest::DeleteVolume(const std::string& volume_id) {
  csi::v1::DeleteVolumeRequest req;
  req.set_volume_id(volume_id);
  AddSecrets(&req);
  grpc::ClientContext ctx;
  csi::v1::DeleteVolumeResponse resp;
  grpc::Status s = controller_->DeleteVolume(&ctx, req, &resp);
  if (s.ok()) Unregister(volume_id);
  return s;
}

grpc::Status CsiSanityVmTest::CreateSnapshot(const csi::v1::CreateSnapshotRequest& req,
                                             csi::v1::CreateSnapshotResponse* resp) {
  grpc::ClientContext ctx;
  grpc::Status s = controller_->CreateSnapshot(&ctx, req, resp);
  if (s.ok() && !resp->snapshot().snapshot_id().empty()) resources_.push_back({resp->snapshot().snapshot_id(), true});
  return s;
}

grpc::Status CsiSanityVmTest::DeleteSnapshot(const std::string& snapshot_id) {
  csi::v1::DeleteSnapshotRequest req;
  req.set_snapshot_id(snapshot_id);
  AddSecrets(&req);
  grpc::ClientContext ctx;
  csi::v1::DeleteSnapshotResponse resp;
  grpc::Status s = controller_->DeleteSnapshot(&ctx, req, &resp);
  if (s.ok() && !snapshot_id.empty()) Unregister(snapshot_id);
  return s;
}

bool CsiSanityVmTest::MustCreateVolume(const csi::v1::CreateVolumeRequest& req, csi::v1::Volume* out) {
  csi::v1::CreateVolumeResponse resp;
  grpc::Status s = CreateVolume(req, &resp);
  EXPECT_TRUE(s.ok()) << "volume create failed: " << s.error_code() << " " << s.error_message();
  EXPECT_FALSE(resp.volume().volume_id().empty()) << "volume ID in response is missing";
  *out = resp.volume();
  return s.ok() && !out->volume_id().empty();
}

bool CsiSanityVmTest::MustCreateSnapshot(const csi::v1::CreateSnapshotRequest& req, csi::v1::Snapshot* out) {
  csi::v1::CreateSnapshotResponse resp;
  grpc::Status s = CreateSnapshot(req, &resp);
  EXPECT_TRUE(s.ok()) << "create snapshot failed: " << s.error_code() << " " << s.error_message();
  if (!s.ok()) return false;
  VerifySnapshotInfo(resp.snapshot());
  *out = resp.snapshot();
  return !out->snapshot_id().empty();
}

bool CsiSanityVmTest::MustCreateSnapshotFromNewVolume(const std::string& volume_name, const std::string& snapshot_name,
                                                      csi::v1::Snapshot* out) {
  csi::v1::Volume volume;
  if (!MustCreateVolume(MakeCreateVolumeReq(volume_name), &volume)) return false;
  return MustCreateSnapshot(MakeCreateSnapshotReq(snapshot_name, volume.volume_id()), out);
}

grpc::Status CsiSanityVmTest::ListSnapshots(csi::v1::ListSnapshotsRequest req, csi::v1::ListSnapshotsResponse* resp) {
  AddSecrets(&req);
  grpc::ClientContext ctx;
  return controller_->ListSnapshots(&ctx, req, resp);
}

grpc::Status CsiSanityVmTest::Validate(const csi::v1::ValidateVolumeCapabilitiesRequest& req,
                                       csi::v1::ValidateVolumeCapabilitiesResponse* resp) {
  grpc::ClientContext ctx;
  return controller_->ValidateVolumeCapabilities(&ctx, req, resp);
}

grpc::Status CsiSanityVmTest::ControllerExpand(const csi::v1::ControllerExpandVolumeRequest& req,
                                               csi::v1::ControllerExpandVolumeResponse* resp) {
  grpc::ClientContext ctx;
  return controller_->ControllerExpandVolume(&ctx, req, resp);
}

grpc::Status CsiSanityVmTest::NodeStage(const csi::v1::NodeStageVolumeRequest& req) {
  grpc::ClientContext ctx;
  csi::v1::NodeStageVolumeResponse resp;
  return Node()->NodeStageVolume(&ctx, req, &resp);
}

grpc::Status CsiSanityVmTest::NodeUnstage(const csi::v1::NodeUnstageVolumeRequest& req) {
  grpc::ClientContext ctx;
  csi::v1::NodeUnstageVolumeResponse resp;
  return Node()->NodeUnstageVolume(&ctx, req, &resp);
}

grpc::Status CsiSanityVmTest::NodePublish(const csi::v1::NodePublishVolumeRequest& req) {
  grpc::ClientContext ctx;
  csi::v1::NodePublishVolumeResponse resp;
  return Node()->NodePublishVolume(&ctx, req, &resp);
}

grpc::Status CsiSanityVmTest::NodeUnpublish(const csi::v1::NodeUnpublishVolumeRequest& req) {
  grpc::ClientContext ctx;
  csi::v1::NodeUnpublishVolumeResponse resp;
  return Node()->NodeUnpublishVolume(&ctx, req, &resp);
}

grpc::Status CsiSanityVmTest::NodeStats(const csi::v1::NodeGetVolumeStatsRequest& req,
                                        csi::v1::NodeGetVolumeStatsResponse* resp) {
  grpc::ClientContext ctx;
  return Node()->NodeGetVolumeStats(&ctx, req, resp);
}

grpc::Status CsiSanityVmTest::NodeExpand(const csi::v1::NodeExpandVolumeRequest& req) {
  grpc::ClientContext ctx;
  csi::v1::NodeExpandVolumeResponse resp;
  return Node()->NodeExpandVolume(&ctx, req, &resp);
}

grpc::Status CsiSanityVmTest::NodeInfo(csi::v1::NodeGetInfoResponse* resp) {
  grpc::ClientContext ctx;
  return Node()->NodeGetInfo(&ctx, {}, resp);
}

void CsiSanityVmTest::VerifySnapshotInfo(const csi::v1::Snapshot& s) {
  EXPECT_FALSE(s.snapshot_id().empty());
  EXPECT_FALSE(s.source_volume_id().empty());
  EXPECT_TRUE(s.has_creation_time() && (s.creation_time().seconds() != 0 || s.creation_time().nanos() != 0))
      << s.snapshot_id() << ": creation_time is zero";
}

void CsiSanityVmTest::Unregister(const std::string& id) {
  auto it = std::find_if(resources_.begin(), resources_.end(), [&](const Resource& r) { return r.id == id; });
  if (it != resources_.end()) resources_.erase(it);
}

}  // namespace nbdk::vmtest
