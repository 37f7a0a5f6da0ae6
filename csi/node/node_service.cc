#include "csi/node/node_service.h"

#include "csi/locked_call.h"
#include "csi/node/stage_transaction.h"
#include "csi/node/volume_operations.h"

namespace nbdk {
namespace {

// Volume calls wait for the heal: before it, the journal may not be loaded
// and a journaled volume may be re-attaching, so an answer could be wrong
// and a stage could map a volume the heal is about to adopt.
Status CheckHealed(const NodeContext& node) {
  if (node.healed) return Status::Ok();
  return Status::Unavailable("nbdkeeperd is still loading its node journal and healing volumes; retry shortly");
}

// A volume call's parser: UNAVAILABLE until the heal is done, then `parse`.
template <typename Parsed, typename Request>
auto AfterHeal(const NodeContext& node, Result<Parsed> (*parse)(const Request&)) {
  return [&node, parse](const Request& request) -> Result<Parsed> {
    NBDK_RETURN_IF_ERROR(CheckHealed(node));
    return parse(request);
  };
}

// A volume call's op lock: its volume's.
auto VolumeLock(NodeContext& node) {
  return [&node](const auto& parsed) { return node.volumes.Lock(parsed.volume_id); };
}

}  // namespace

NodeService::NodeService(RpcEnv env, NodeContext& node)
    : SelfParsingService(env, "csi.v1.Node"), env_(env), node_(node) {
  ParseItself("NodeStageVolume", &NodeService::NodeStageVolume);
  ParseItself("NodeUnstageVolume", &NodeService::NodeUnstageVolume);
  ParseItself("NodePublishVolume", &NodeService::NodePublishVolume);
  ParseItself("NodeUnpublishVolume", &NodeService::NodeUnpublishVolume);
  ParseItself("NodeGetVolumeStats", &NodeService::NodeGetVolumeStats);
  ParseItself("NodeExpandVolume", &NodeService::NodeExpandVolume);
  ParseItself("NodeGetCapabilities", &NodeService::NodeGetCapabilities);
  ParseItself("NodeGetInfo", &NodeService::NodeGetInfo);
}

grpc::ServerUnaryReactor* NodeService::NodeStageVolume(grpc::CallbackServerContext* c,
                                                       const csi::v1::NodeStageVolumeRequest* r,
                                                       csi::v1::NodeStageVolumeResponse*) {
  return LockedCall<StageRequest>(env_, c, "NodeStageVolume", r, AfterHeal(node_, ParseStageRequest), VolumeLock(node_),
                                  [this](StageRequest req, VolumeOpLock lock, RpcDone done) {
                                    StageVolume(node_, std::move(req), std::move(lock), done);
                                  });
}

grpc::ServerUnaryReactor* NodeService::NodeUnstageVolume(grpc::CallbackServerContext* c,
                                                         const csi::v1::NodeUnstageVolumeRequest* r,
                                                         csi::v1::NodeUnstageVolumeResponse*) {
  return LockedCall<UnstageRequest>(env_, c, "NodeUnstageVolume", r, AfterHeal(node_, ParseUnstageRequest),
                                    VolumeLock(node_), [this](UnstageRequest req, VolumeOpLock lock, RpcDone done) {
                                      UnstageVolume(node_, std::move(req), std::move(lock), done);
                                    });
}

grpc::ServerUnaryReactor* NodeService::NodePublishVolume(grpc::CallbackServerContext* c,
                                                         const csi::v1::NodePublishVolumeRequest* r,
                                                         csi::v1::NodePublishVolumeResponse*) {
  return LockedCall<PublishRequest>(env_, c, "NodePublishVolume", r, AfterHeal(node_, ParsePublishRequest),
                                    VolumeLock(node_), [this](PublishRequest req, VolumeOpLock lock, RpcDone done) {
                                      PublishVolume(node_, std::move(req), std::move(lock), done);
                                    });
}

grpc::ServerUnaryReactor* NodeService::NodeUnpublishVolume(grpc::CallbackServerContext* c,
                                                           const csi::v1::NodeUnpublishVolumeRequest* r,
                                                           csi::v1::NodeUnpublishVolumeResponse*) {
  return LockedCall<UnpublishRequest>(env_, c, "NodeUnpublishVolume", r, AfterHeal(node_, ParseUnpublishRequest),
                                      VolumeLock(node_), [this](UnpublishRequest req, VolumeOpLock lock, RpcDone done) {
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
  return LockedCall<ExpandRequest>(env_, c, "NodeExpandVolume", r, AfterHeal(node_, ParseExpandRequest),
                                   VolumeLock(node_),
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
    // Always a topology, empty without --domain-labels, as ceph-csi answers:
    // a plugin with accessibility constraints reports one (csi-sanity checks).
    auto* segments = response->mutable_accessible_topology()->mutable_segments();
    for (const auto& [key, value] : node_.options.topology) (*segments)[key] = value;
    done(Status::Ok());
  });
}

}  // namespace nbdk
