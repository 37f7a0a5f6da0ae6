#include "csi/rpc.h"

#include <chrono>
#include <cstdlib>
#include <string_view>

#include "base/log.h"
#include "csi/grpc_status.h"

namespace nbdk {
namespace {

constexpr const char* kRpcsTotal = "nbdkeeper_csi_rpcs_total";
constexpr const char* kRpcSeconds = "nbdkeeper_csi_rpc_duration_seconds";

const char* GrpcCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    default:
      return "UNAUTHENTICATED";
  }
}

// NOT_FOUND tells a CO that the volume (or snapshot) in its request does not
// exist, and a CO acts on that. Only these calls look one up and may say so
// (CreateVolume: also its content source; CreateSnapshot: its source);
// any other NotFound (a missing file or directory, a lookup in the node's
// configuration) is the plugin's precondition, not the volume's absence.
bool MayAnswerNotFound(std::string_view method) {
  for (std::string_view m : {"NodeGetVolumeStats", "NodeExpandVolume", "ControllerExpandVolume",
                             "ValidateVolumeCapabilities", "CreateVolume", "ControllerGetVolume", "CreateSnapshot"}) {
    if (m == method) return true;
  }
  return false;
}

Status ForCo(const char* method, const Status& status) {
  if (status.code() != Code::kNotFound || MayAnswerNotFound(method)) return status;
  return Status::FailedPrecondition(status.message());
}

}  // namespace

void DeclareRpcMetrics(Metrics& metrics) {
  metrics.DeclareCounter(kRpcsTotal, "CSI RPCs finished, by method and gRPC code.");
  metrics.DeclareHistogram(kRpcSeconds, "CSI RPC latency from arrival to finish, by method.",
                           {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60});
}

int GrpcMethodIndex(const char* service, const char* method) {
  const auto* s = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(service);
  const auto* m = s ? s->FindMethodByName(method) : nullptr;
  if (m == nullptr) {
    NBDK_LOG_ERROR("grpc_method_unknown", {{"service", service}, {"method", method}});
    std::abort();
  }
  return m->index();
}

grpc::ServerUnaryReactor* Dispatch(RpcEnv& env, grpc::CallbackServerContext* context, const char* method,
                                   std::function<void(RpcDone done)> handler) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto start = std::chrono::steady_clock::now();
  bool posted = env.loop.Post([&env, reactor, method, start, handler = std::move(handler)] {
    handler([&env, reactor, method, start](const Status& answer) {
      Status status = ForCo(method, answer);
      grpc::Status g = ToGrpcStatus(status);
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      env.metrics.Increment(kRpcsTotal, {{"method", method}, {"code", GrpcCodeName(g.error_code())}});
      env.metrics.Observe(kRpcSeconds, {{"method", method}}, seconds);
      if (!status.ok()) {
        // What the client got: bounded and escaped, not a lower layer's raw text.
        NBDK_LOG_INFO("csi_rpc_failed",
                      {{"method", method}, {"code", GrpcCodeName(g.error_code())}, {"error", g.error_message()}});
      } else {
        NBDK_LOG_DEBUG("csi_rpc", {{"method", method}, {"ms", static_cast<int64_t>(seconds * 1000)}});
      }
      reactor->Finish(g);
    });
  });
  if (!posted) reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "nbdkeeperd is shutting down"));
  return reactor;
}

}  // namespace nbdk
