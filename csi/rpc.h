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
//
// A service parses its own requests (SelfParsingService): gRPC's generated
// handler answers a request that does not parse with UNIMPLEMENTED, which
// tells a CO the RPC does not exist; ours answers INVALID_ARGUMENT.
#pragma once

#include <google/protobuf/descriptor.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/proto_utils.h>

#include <functional>
#include <memory>
#include <string>

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

// A request as gRPC hands it to a SelfParsingService method: parsed, or not.
template <class Message>
struct Unparsed {
  Message message;
  bool parsed = false;
};

// The index of `method` in the gRPC service `service` (its full protobuf
// name), as the generated code numbers them; aborts when there is none (a
// wrong name is the code's mistake, found by the first start).
int GrpcMethodIndex(const char* service, const char* method);

// Derive a service from SelfParsingService<csi::v1::X::CallbackService> and
// call ParseItself for each method it implements, from its constructor.
template <class Generated>
class SelfParsingService : public Generated {
 protected:
  SelfParsingService(RpcEnv env, const char* service) : env_(env), service_(service) {}

  template <class Self, class Request, class Response>
  void ParseItself(const char* method, grpc::ServerUnaryReactor* (Self::*handler)(grpc::CallbackServerContext*,
                                                                                  const Request*, Response*)) {
    auto* self = static_cast<Self*>(this);
    auto get_reactor = [self, handler, method, env = env_](grpc::CallbackServerContext* context,
                                                           const Unparsed<Request>* request,
                                                           Response* response) mutable {
      if (request->parsed) return (self->*handler)(context, &request->message, response);
      return Dispatch(env, context, method, [method](RpcDone done) {
        done(Status::InvalidArgument(std::string(method) + ": the request is not a valid " +
                                     Request::descriptor()->full_name() + " message"));
      });
    };
    // The Service owns its handlers, as in the generated constructor.
    this->MarkMethodCallback(
        GrpcMethodIndex(service_, method),
        std::make_unique<grpc::internal::CallbackUnaryHandler<Unparsed<Request>, Response>>(std::move(get_reactor))
            .release());
  }

 private:
  RpcEnv env_;
  const char* service_;
};

}  // namespace nbdk

// gRPC's parse of an Unparsed request never fails the call: the method
// answers.
template <class Message>
class grpc::SerializationTraits<nbdk::Unparsed<Message>, void> {
 public:
  static grpc::Status Deserialize(grpc::ByteBuffer* buffer, nbdk::Unparsed<Message>* request) {
    request->parsed = grpc::GenericDeserialize<grpc::ProtoBufferReader, Message>(buffer, &request->message).ok();
    return grpc::Status::OK;
  }
};
