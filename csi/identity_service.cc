#include "csi/identity_service.h"

#include "base/version.h"

namespace nbdk {

IdentityService::IdentityService(RpcEnv env, std::string driver_name, std::function<bool()> ready)
    : SelfParsingService(env, "csi.v1.Identity"),
      env_(env),
      driver_name_(std::move(driver_name)),
      ready_(std::move(ready)) {
  ParseItself("GetPluginInfo", &IdentityService::GetPluginInfo);
  ParseItself("GetPluginCapabilities", &IdentityService::GetPluginCapabilities);
  ParseItself("Probe", &IdentityService::Probe);
}

grpc::ServerUnaryReactor* IdentityService::GetPluginInfo(grpc::CallbackServerContext* context,
                                                         const csi::v1::GetPluginInfoRequest*,
                                                         csi::v1::GetPluginInfoResponse* response) {
  return Dispatch(env_, context, "GetPluginInfo", [this, response](RpcDone done) {
    response->set_name(driver_name_);
    response->set_vendor_version(kVersion);
    done(Status::Ok());
  });
}

grpc::ServerUnaryReactor* IdentityService::GetPluginCapabilities(grpc::CallbackServerContext* context,
                                                                 const csi::v1::GetPluginCapabilitiesRequest*,
                                                                 csi::v1::GetPluginCapabilitiesResponse* response) {
  // The Controller service is registered beside the Node service. ONLINE
  // expansion, as ceph-csi advertises: ControllerExpandVolume grows a mapped
  // image and NodeExpandVolume the device and filesystem while in use.
  // Accessibility constraints, as ceph-csi advertises them: CreateVolume
  // honours topologyConstrainedPools and NodeGetInfo reports the node's
  // segments (csi/topology.h); without either a volume is reachable anywhere.
  return Dispatch(env_, context, "GetPluginCapabilities", [response](RpcDone done) {
    response->add_capabilities()->mutable_service()->set_type(csi::v1::PluginCapability::Service::CONTROLLER_SERVICE);
    response->add_capabilities()->mutable_service()->set_type(
        csi::v1::PluginCapability::Service::VOLUME_ACCESSIBILITY_CONSTRAINTS);
    response->add_capabilities()->mutable_volume_expansion()->set_type(
        csi::v1::PluginCapability::VolumeExpansion::ONLINE);
    done(Status::Ok());
  });
}

grpc::ServerUnaryReactor* IdentityService::Probe(grpc::CallbackServerContext* context, const csi::v1::ProbeRequest*,
                                                 csi::v1::ProbeResponse* response) {
  return Dispatch(env_, context, "Probe", [this, response](RpcDone done) {
    response->mutable_ready()->set_value(ready_());
    done(Status::Ok());
  });
}

}  // namespace nbdk
