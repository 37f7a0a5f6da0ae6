// NodeService: the CSI Node service. A thin layer over csi/rpc.h: each RPC
// parses its request (node_request.h), takes the volume's op lock where it
// changes state, and runs the operation (stage_transaction.h,
// volume_operations.h) on the loop.
#pragma once

#include "csi/node/node_context.h"
#include "csi/proto/csi.grpc.pb.h"
#include "csi/rpc.h"

namespace nbdk {

class NodeService final : public SelfParsingService<csi::v1::Node::CallbackService> {
 public:
  NodeService(RpcEnv env, NodeContext& node);

  grpc::ServerUnaryReactor* NodeStageVolume(grpc::CallbackServerContext* c, const csi::v1::NodeStageVolumeRequest* r,
                                            csi::v1::NodeStageVolumeResponse*) override;
  grpc::ServerUnaryReactor* NodeUnstageVolume(grpc::CallbackServerContext* c,
                                              const csi::v1::NodeUnstageVolumeRequest* r,
                                              csi::v1::NodeUnstageVolumeResponse*) override;
  grpc::ServerUnaryReactor* NodePublishVolume(grpc::CallbackServerContext* c,
                                              const csi::v1::NodePublishVolumeRequest* r,
                                              csi::v1::NodePublishVolumeResponse*) override;
  grpc::ServerUnaryReactor* NodeUnpublishVolume(grpc::CallbackServerContext* c,
                                                const csi::v1::NodeUnpublishVolumeRequest* r,
                                                csi::v1::NodeUnpublishVolumeResponse*) override;
  grpc::ServerUnaryReactor* NodeGetVolumeStats(grpc::CallbackServerContext* c,
                                               const csi::v1::NodeGetVolumeStatsRequest* r,
                                               csi::v1::NodeGetVolumeStatsResponse* response) override;
  grpc::ServerUnaryReactor* NodeExpandVolume(grpc::CallbackServerContext* c, const csi::v1::NodeExpandVolumeRequest* r,
                                             csi::v1::NodeExpandVolumeResponse* response) override;
  grpc::ServerUnaryReactor* NodeGetCapabilities(grpc::CallbackServerContext* c,
                                                const csi::v1::NodeGetCapabilitiesRequest*,
                                                csi::v1::NodeGetCapabilitiesResponse* response) override;
  grpc::ServerUnaryReactor* NodeGetInfo(grpc::CallbackServerContext* c, const csi::v1::NodeGetInfoRequest*,
                                        csi::v1::NodeGetInfoResponse* response) override;

 private:
  RpcEnv env_;
  NodeContext& node_;
};

}  // namespace nbdk
