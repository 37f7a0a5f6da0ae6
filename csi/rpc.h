// How every CSI RPC runs: the one threading pattern of nbdkeeper's gRPC side.
//
//  1. A gRPC thread calls the generated CallbackService method. The method
//     only calls Dispatch(): it takes the call's DefaultReactor (gRPC owns it
//     and frees it after OnDone) and Posts `handler` to the loop. It returns
//     at once; no domain state is touched off the loop.
//  2. On the loop thread `handler(done)` validates the request, does its work
//     (synchronously or through asynchronous steps) and calls `done(status)`
//     exactly once, on the loop thread. The request and response objects stay
//     valid until then.
//  3. `done` counts the call by method and gRPC code, observes its latency,
//     and finishes the reactor.
// When the loop is already shutting down, the call is finished UNAVAILABLE
// from the gRPC thread without running `handler`.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>

#include "base/event_loop.h"
#include "base/metrics.h"
#include "base/status.h"

namespace nbdk {

struct RpcEnv {
  EventLoop& loop;
  Metrics& metrics;
};

using RpcDone = std::function<void(const Status&)>;

grpc::ServerUnaryReactor* Dispatch(RpcEnv& env, grpc::CallbackServerContext* context, const char* method,
                                   std::function<void(RpcDone done)> handler);

// Declares the metric families Dispatch() records into.
void DeclareRpcMetrics(Metrics& metrics);

}  // namespace nbdk
