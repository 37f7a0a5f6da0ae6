// ControllerService: the CSI Controller service - CreateVolume (empty, from
// a snapshot, or a clone), DeleteVolume, ControllerExpandVolume,
// ValidateVolumeCapabilities, CreateSnapshot, DeleteSnapshot, ListSnapshots
// - for ceph-csi-compatible RBD volumes (csi/controller/controller_operations.h,
// csi/controller/clone_operations.h and csi/controller/snapshot_operations.h do the work).
//
// Follows csi/rpc.h. Per call, on the loop: parse (csi/controller/controller_request.h),
// take the op locks of the request name and the volume or snapshot IDs it
// touches (ABORTED when one is held: a snapshot of a volume being deleted,
// a restore from a snapshot being deleted),
// then in blocking work read config.json and write the caller's key to a
// 0600 key file, connect (RadosClients), run the operation, and remove the
// key file. Every blocking step runs on Lane::kController
// (base/event_loop.h), so no Controller call ever waits on a cluster
// in a thread the Node needs. Loop thread only; `rados` is the Controller's
// own cache, on that lane, and outlives the service.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ceph/rados_clients.h"
#include "csi/cluster_config.h"
#include "csi/controller/volume_encryption.h"
#include "csi/op_locks.h"
#include "csi/proto/csi.grpc.pb.h"
#include "csi/rpc.h"
#include "encryption/kms_config.h"

namespace nbdk {

struct ControllerSecrets;

struct ControllerOptions {
  std::string key_dir = "/run/nbdkeeper/keys";
  ClusterSource clusters;    // config.json path, ceph.conf, librados timeout
  bool set_metadata = true;  // CreateVolume writes the PVC/PV names (daemon --setmetadata)
  // ceph-csi's KMS config (daemon --kms-config), read per request as
  // ceph-csi does: the ConfigMap may change while the daemon runs.
  std::string kms_config_path = std::string(kKmsConfigPath);
};

class ControllerService final : public SelfParsingService<csi::v1::Controller::CallbackService> {
 public:
  ControllerService(RpcEnv env, RadosClients& rados, ControllerOptions options);

  grpc::ServerUnaryReactor* CreateVolume(grpc::CallbackServerContext* c, const csi::v1::CreateVolumeRequest* r,
                                         csi::v1::CreateVolumeResponse* response) override;
  grpc::ServerUnaryReactor* DeleteVolume(grpc::CallbackServerContext* c, const csi::v1::DeleteVolumeRequest* r,
                                         csi::v1::DeleteVolumeResponse*) override;
  grpc::ServerUnaryReactor* ControllerExpandVolume(grpc::CallbackServerContext* c,
                                                   const csi::v1::ControllerExpandVolumeRequest* r,
                                                   csi::v1::ControllerExpandVolumeResponse* response) override;
  grpc::ServerUnaryReactor* ValidateVolumeCapabilities(grpc::CallbackServerContext* c,
                                                       const csi::v1::ValidateVolumeCapabilitiesRequest* r,
                                                       csi::v1::ValidateVolumeCapabilitiesResponse* response) override;
  grpc::ServerUnaryReactor* CreateSnapshot(grpc::CallbackServerContext* c, const csi::v1::CreateSnapshotRequest* r,
                                           csi::v1::CreateSnapshotResponse* response) override;
  grpc::ServerUnaryReactor* DeleteSnapshot(grpc::CallbackServerContext* c, const csi::v1::DeleteSnapshotRequest* r,
                                           csi::v1::DeleteSnapshotResponse*) override;
  grpc::ServerUnaryReactor* ListSnapshots(grpc::CallbackServerContext* c, const csi::v1::ListSnapshotsRequest* r,
                                          csi::v1::ListSnapshotsResponse* response) override;
  grpc::ServerUnaryReactor* ControllerGetCapabilities(grpc::CallbackServerContext* c,
                                                      const csi::v1::ControllerGetCapabilitiesRequest*,
                                                      csi::v1::ControllerGetCapabilitiesResponse* response) override;

 private:
  // Work on one cluster: `(connection, effective RADOS namespace)`. BLOCKING.
  using ClusterWork = std::function<Status(const std::shared_ptr<RadosCluster>&, const std::string&)>;

  // Writes the key file, connects as `secrets`' user to `cluster_id` and runs
  // `work` in blocking work; the key file is removed afterwards whatever
  // happened. `done` runs on the loop. `ns` overrides config.json's RADOS
  // namespace when not empty.
  void OnCluster(const std::string& cluster_id, const std::string& ns, const ControllerSecrets& secrets,
                 ClusterWork work, std::function<void(Status)> done);

  // Resolves a KMS ID through options_.kms_config_path. BLOCKING.
  KmsResolver ResolveKmsOnThisNode() const;

  // ListSnapshots on `clusters[next...]` one after the other, gathering
  // into `found`; `done` runs on the loop.
  struct SnapshotListing;
  void ListOnClusters(std::shared_ptr<SnapshotListing> listing, size_t next, std::function<void(Status)> done);

  RpcEnv env_;
  RadosClients& rados_;
  ControllerOptions options_;
  OpLocks locks_;
  uint64_t key_files_ = 0;  // names each call's key file uniquely
};

}  // namespace nbdk
