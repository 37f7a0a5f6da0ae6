// The snapshot VM tests' fixture (snapshot_data_vm_test.cc,
// snapshot_contract_vm_test.cc: one executable, one daemon): the Controller
// over gRPC to the suite's nbdkeeperd, a RADOS connection to read what it
// wrote, the rados and rbd CLIs as the test's cephx user, and a device's
// bytes written and read directly.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ceph/rados_cluster.h"
#include "journal/volume_id.h"
#include "test/common/vm_command.h"
#include "test/csi/controller/controller_vm_helpers.h"
#include "test/csi/node_vm_fixture.h"

namespace nbdk::vmtest {

inline constexpr int64_t kGiB = 1024 * kMiB;

// `bytes` of a pattern that differs per `seed` and per MiB.
inline std::string Pattern(char seed, int64_t bytes) {
  std::string out(bytes, '\0');
  for (int64_t i = 0; i < bytes; ++i) out[i] = static_cast<char>(seed + (i / kMiB) * 7 + (i % 251));
  return out;
}

inline bool WriteAt(const std::string& device, int64_t offset, const std::string& data) {
  int fd = ::open(device.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::pwrite(fd, data.data(), data.size(), offset) == static_cast<ssize_t>(data.size()) && ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

inline std::string ReadAt(const std::string& device, int64_t offset, int64_t bytes) {
  std::string out(bytes, '\0');
  int fd = ::open(device.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  ssize_t n = ::pread(fd, out.data(), out.size(), offset);
  ::close(fd);
  return n == bytes ? out : "";
}

inline double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

class SnapshotVmTest : public NodeVmTest {
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
    cluster_ = *cluster;
  }

  template <typename Request>
  static void Secrets(Request* r) {
    (*r->mutable_secrets())["userID"] = Ceph().user;
    (*r->mutable_secrets())["userKey"] = Ceph().key;
  }

  // CreateVolume, from `snapshot_id` or `volume_id` when given.
  grpc::Status Create(const std::string& name, int64_t bytes, csi::v1::CreateVolumeResponse* resp,
                      const std::string& snapshot_id = "", const std::string& volume_id = "") {
    csi::v1::CreateVolumeRequest req;
    req.set_name(name);
    req.mutable_capacity_range()->set_required_bytes(bytes);
    *req.add_volume_capabilities() = BlockCap();
    (*req.mutable_parameters())["clusterID"] = "test";
    (*req.mutable_parameters())["pool"] = Ceph().pool;
    if (!snapshot_id.empty()) req.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(snapshot_id);
    if (!volume_id.empty()) req.mutable_volume_content_source()->mutable_volume()->set_volume_id(volume_id);
    Secrets(&req);
    grpc::ClientContext ctx;
    return controller_->CreateVolume(&ctx, req, resp);
  }

  grpc::Status DeleteVolume(const std::string& volume_id) {
    csi::v1::DeleteVolumeRequest req;
    req.set_volume_id(volume_id);
    Secrets(&req);
    grpc::ClientContext ctx;
    csi::v1::DeleteVolumeResponse resp;
    return controller_->DeleteVolume(&ctx, req, &resp);
  }

  grpc::Status Snap(const std::string& name, const std::string& source, csi::v1::CreateSnapshotResponse* resp) {
    csi::v1::CreateSnapshotRequest req;
    req.set_name(name);
    req.set_source_volume_id(source);
    (*req.mutable_parameters())["clusterID"] = "test";
    Secrets(&req);
    grpc::ClientContext ctx;
    return controller_->CreateSnapshot(&ctx, req, resp);
  }

  grpc::Status DeleteSnap(const std::string& snapshot_id) {
    csi::v1::DeleteSnapshotRequest req;
    req.set_snapshot_id(snapshot_id);
    Secrets(&req);
    grpc::ClientContext ctx;
    csi::v1::DeleteSnapshotResponse resp;
    return controller_->DeleteSnapshot(&ctx, req, &resp);
  }

  grpc::Status List(csi::v1::ListSnapshotsRequest req, csi::v1::ListSnapshotsResponse* resp) {
    Secrets(&req);
    grpc::ClientContext ctx;
    return controller_->ListSnapshots(&ctx, req, resp);
  }

  // Stages `volume_id` as a block volume; returns its nbd device.
  std::string StageBlock(const std::string& volume_id) {
    auto req = StageReq(volume_id, BlockCap());
    req.set_staging_target_path(StagingPath(volume_id));
    req.mutable_volume_context()->clear();
    (*req.mutable_volume_context())["clusterID"] = "test";
    (*req.mutable_volume_context())["mounter"] = "rbd-nbd";
    grpc::Status s = Stage(req);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return s.ok() ? StatusField(volume_id, "device") : "";
  }

  std::string ImageOf(const std::string& id, const char* prefix = "csi-vol-") {
    auto decoded = DecodeVolumeId(id);
    return decoded.ok() ? prefix + decoded->object_uuid : "";
  }

  // `program` (rados, rbd) as the test's cephx user, + args.
  static std::vector<std::string> AsUser(const std::string& program, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {program, "-c", Ceph().conf, "--id", Ceph().user, "--keyfile", Ceph().keyfile};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  static std::vector<std::string> Rados(std::vector<std::string> args) {
    args.insert(args.begin(), {"-p", Ceph().pool});
    return AsUser("rados", args);
  }
  static std::vector<std::string> Rbd(const std::vector<std::string>& args) { return AsUser("rbd", args); }
  static void Cli(const std::vector<std::string>& argv) {
    auto out = RunCommand(argv, true);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ(out->exit.code, 0) << argv[0] << " " << argv.back() << ": " << out->stdout_text;
  }

  std::unique_ptr<csi::v1::Controller::Stub> controller_;
  std::shared_ptr<RadosCluster> cluster_;
  std::optional<IoCtx> io_;
};

}  // namespace nbdk::vmtest
