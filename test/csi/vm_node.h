// VmNode: one real nbdkeeperd in the test VM playing one Kubernetes node -
// its own root (staging and pod paths, key dir, state, socket), node ID and
// health port - driven over its unix socket by a real gRPC client, against
// the VM's one-node Ceph. Two of them are two nodes: distinct clients of
// one cluster, as far as Ceph can tell.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "csi/proto/csi.grpc.pb.h"
#include "test/common/daemon_process.h"
#include "test/common/vm_volume.h"

namespace nbdk::vmtest {

using CephEnv = VmCeph;
// The VM harness's Ceph environment, read once.
const CephEnv& Ceph();

// Creates an RBD image of `mib` MiB in the test pool (a leftover of an
// earlier run is replaced); false with the reason in `error` otherwise.
bool CreateTestImage(const std::string& name, int mib, std::string* error);

csi::v1::VolumeCapability MountCapability(
    const std::string& fs_type,
    csi::v1::VolumeCapability::AccessMode::Mode mode = csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
csi::v1::VolumeCapability BlockCapability(
    csi::v1::VolumeCapability::AccessMode::Mode mode = csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);

// rbd-nbd processes serving `image` of the test pool, on every node of
// this VM.
int RbdNbdProcessesFor(const std::string& image);

class VmNode {
 public:
  VmNode(std::string root, std::string node_id);

  // Starts the daemon (a fresh root the first time, as `fresh` says) and
  // waits until it is ready; the log is in the failure's message.
  bool Start(bool fresh, const std::vector<std::string>& extra, std::string* error);
  // SIGTERM, then waits; the raw wait status.
  int Stop();
  // The node dies: SIGKILL of the daemon and of every rbd-nbd it serves.
  void Kill();

  const std::string& root() const { return root_; }
  const std::string& node_id() const { return node_id_; }
  test::DaemonProcess& daemon() { return *daemon_; }
  // The daemon's Node client (reset and replaced by a restart).
  std::unique_ptr<csi::v1::Node::Stub>& stub() { return node_; }

  std::string StagingPath(const std::string& volume_id) const { return root_ + "/staging/" + volume_id; }
  std::string TargetPath(const std::string& volume_id, int n) const {
    return root_ + "/pods/" + volume_id + "-" + std::to_string(n);
  }
  // A static-volume stage request (the volume id is the image name).
  csi::v1::NodeStageVolumeRequest StageReq(const std::string& image, const csi::v1::VolumeCapability& cap) const;
  grpc::Status Stage(const csi::v1::NodeStageVolumeRequest& req);
  grpc::Status Unstage(const std::string& volume_id);
  grpc::Status Publish(const std::string& volume_id, const std::string& target, const csi::v1::VolumeCapability& cap,
                       bool read_only = false);
  grpc::Status Unpublish(const std::string& volume_id, const std::string& target);
  csi::v1::NodeGetVolumeStatsResponse Stats(const std::string& volume_id, const std::string& path,
                                            grpc::Status* status);

  // The daemon's /status entry for the volume (JSON text), or "".
  std::string StatusOf(const std::string& volume_id) const;
  // A scalar field of the volume's /status entry ("" when absent).
  std::string StatusField(const std::string& volume_id, const std::string& field) const;

 private:
  std::string root_, node_id_;
  std::unique_ptr<test::DaemonProcess> daemon_;
  std::unique_ptr<csi::v1::Node::Stub> node_;
};

inline bool IsMounted(const std::string& path) { return IsMountPoint(path); }

}  // namespace nbdk::vmtest
