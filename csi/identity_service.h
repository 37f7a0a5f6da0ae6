// IdentityService: CSI Identity (GetPluginInfo, GetPluginCapabilities, Probe).
// Follows csi/rpc.h. `ready` runs on the loop thread and reports whether
// startup reconciliation (the journal heal) has finished.
#pragma once

#include <functional>
#include <string>

#include "csi/proto/csi.grpc.pb.h"
#include "csi/rpc.h"

namespace nbdk {

class IdentityService final : public SelfParsingService<csi::v1::Identity::CallbackService> {
 public:
  IdentityService(RpcEnv env, std::string driver_name, std::function<bool()> ready);

  grpc::ServerUnaryReactor* GetPluginInfo(grpc::CallbackServerContext* context,
                                          const csi::v1::GetPluginInfoRequest* request,
                                          csi::v1::GetPluginInfoResponse* response) override;
  grpc::ServerUnaryReactor* GetPluginCapabilities(grpc::CallbackServerContext* context,
                                                  const csi::v1::GetPluginCapabilitiesRequest* request,
                                                  csi::v1::GetPluginCapabilitiesResponse* response) override;
  grpc::ServerUnaryReactor* Probe(grpc::CallbackServerContext* context, const csi::v1::ProbeRequest* request,
                                  csi::v1::ProbeResponse* response) override;

 private:
  RpcEnv env_;
  std::string driver_name_;
  std::function<bool()> ready_;
};

}  // namespace nbdk
