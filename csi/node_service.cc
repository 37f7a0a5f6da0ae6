#include "csi/node_service.h"

#include "csi/stage_transaction.h"
#include "csi/volume_operations.h"

namespace nbdk {
namespace {

// Volume calls wait for the heal: before it, the journal may not be loaded
// and a journaled volume may be re-attaching, so an answer could be wrong
// and a stage could map a volume the heal is about to adopt.
Status CheckHealed(const NodeContext& node) {
  if (node.healed) return Status::Ok();
  return Status::Unavailable("nbdkeeperd is still loading its node journal and healing volumes; retry shortly");
}

// Parses `request`, takes its volume's op lock and runs `op`; a parse
// error or a held lock finishes the RPC at once.
template <typename Parsed, typename Request, typename Parse, typename Op>
grpc::ServerUnaryReactor* LockedCall(RpcEnv& env, NodeContext& node, grpc::CallbackServerContext* context,
                                     const char* method, const Request* request, Parse parse, Op op) {
  return Dispatch(env, context, method, [&node, request, parse, op](RpcDone done) {
    if (Status s = CheckHealed(node); !s.ok()) return done(s);
    Result<Parsed> parsed = parse(*request);
    if (!parsed.ok()) return done(parsed.status());
    auto lock = node.volumes.Lock(parsed->volume_id);
    if (!lock.ok()) return done(lock.status());
    op(std::move(*parsed), std::move(*lock), done);
  });
}

}  // namespace

NodeService::NodeService(RpcEnv env, NodeContext& node) : env_(env), node_(node) {}

grpc::ServerUnaryReactor* NodeService::NodeStageVolume(grpc::CallbackServerContext* c,
                                                       const csi::v1::NodeStageVolumeRequest* r,
                                                       csi::v1::NodeStageVolumeResponse*) {
  return LockedCall<StageRequest>(env_, node_, c, "NodeStageVolume", r, ParseStageRequest,
                                  [this](StageRequest req, VolumeOpLock lock, RpcDone done) {
                                    StageVolume(node_, std::move(req), std::move(lock), done);
                                  });
}

grpc::ServerUnaryReactor* NodeService::NodeUnstageVolume(grpc::CallbackServerContext* c,
                                                         const csi::v1::NodeUnstageVolumeRequest* r,
                                                         csi::v1::NodeUnstageVolumeResponse*) {
  return LockedCall<UnstageRequest>(env_, node_, c, "NodeUnstageVolume", r, ParseUnstageRequest,
                                    [this](UnstageRequest req, VolumeOpLock lock, RpcDone done) {
                                      UnstageVolume(node_, std::move(req), std::move(lock), done);
                                    });
}

grpc::ServerUnaryReactor* NodeService::NodePublishVolume(grpc::CallbackServerContext* c,
                                                         const csi::v1::NodePublishVolumeRequest* r,
                                                         csi::v1::NodePublishVolumeResponse*) {
  return LockedCall<PublishRequest>(env_, node_, c, "NodePublishVolume", r, ParsePublishRequest,
                                    [this](PublishRequest req, VolumeOpLock lock, RpcDone done) {
                                      PublishVolume(node_, std::move(req), std::move(lock), done);
                                    });
}

grpc::ServerUnaryReactor* NodeService::NodeUnpublishVolume(grpc::CallbackServerContext* c,
                                                           const csi::v1::NodeUnpublishVolumeRequest* r,
                                                           csi::v1::NodeUnpublishVolumeResponse*) {
  return LockedCall<UnpublishRequest>(env_, node_, c, "NodeUnpublishVolume", r, ParseUnpublishRequest,
                                      [this](UnpublishRequest req, VolumeOpLock lock, RpcDone done) {
                                        UnpublishVolume(node_, std::move(req), std::move(lock), done);
                                      });
}

grpc::ServerUnaryReactor* NodeService::NodeGetVolumeStats(grpc::CallbackServerContext* c,
                                                          const csi::v1::NodeGetVolumeStatsRequest* r,
                                                          csi::v1::NodeGetVolumeStatsResponse* response) {
  // Read-only: no op lock, so stats keep answering during a long stage.
  return Dispatch(env_, c, "NodeGetVolumeStats", [this, r, response](RpcDone done) {
    if (Status s = CheckHealed(node_); !s.ok()) return done(s);
    auto parsed = ParseVolumeStatsRequest(*r);
    if (!parsed.ok()) return done(parsed.status());
    VolumeStats(node_, std::move(*parsed), response, done);
  });
}

grpc::ServerUnaryReactor* NodeService::NodeExpandVolume(grpc::CallbackServerContext* c,
                                                        const csi::v1::NodeExpandVolumeRequest* r,
                                                        csi::v1::NodeExpandVolumeResponse* response) {
  return LockedCall<ExpandRequest>(env_, node_, c, "NodeExpandVolume", r, ParseExpandRequest,
                                   [this, response](ExpandRequest req, VolumeOpLock lock, RpcDone done) {
                                     ExpandVolume(node_, std::move(req), std::move(lock), response, done);
                                   });
}

grpc::ServerUnaryReactor* NodeService::NodeGetCapabilities(grpc::CallbackServerContext* c,
                                                           const csi::v1::NodeGetCapabilitiesRequest*,
                                                           csi::v1::NodeGetCapabilitiesResponse* response) {
  return Dispatch(env_, c, "NodeGetCapabilities", [response](RpcDone done) {
    using Rpc = csi::v1::NodeServiceCapability::RPC;
    for (auto type : {Rpc::STAGE_UNSTAGE_VOLUME, Rpc::GET_VOLUME_STATS, Rpc::EXPAND_VOLUME, Rpc::VOLUME_CONDITION,
                      Rpc::SINGLE_NODE_MULTI_WRITER}) {
      response->add_capabilities()->mutable_rpc()->set_type(type);
    }
    done(Status::Ok());
  });
}

grpc::ServerUnaryReactor* NodeService::NodeGetInfo(grpc::CallbackServerContext* c, const csi::v1::NodeGetInfoRequest*,
                                                   csi::v1::NodeGetInfoResponse* response) {
  return Dispatch(env_, c, "NodeGetInfo", [this, response](RpcDone done) {
    response->set_node_id(node_.options.node_id);
    response->set_max_volumes_per_node(node_.options.max_volumes);
    done(Status::Ok());
  });
}

}  // namespace nbdk
