// LockedCall: how a CSI RPC that changes a volume starts, in the Node and
// the Controller services alike. Used by the services' source files only.
// Loop thread.
#pragma once

#include <utility>

#include "csi/op_locks.h"
#include "csi/rpc.h"

namespace nbdk {

// Parses `request` with `parse` (a Result<Parsed>), takes its op locks with
// `lock(parsed)` (a Result<OpLocks::Guard>) and runs `op(parsed, guard,
// done)`; a parse error or a held lock finishes the RPC at once (ABORTED
// naming the key). The locks are held until `op` drops the guard, which it
// does once it has called `done`.
template <typename Parsed, typename Request, typename Parse, typename Lock, typename Op>
grpc::ServerUnaryReactor* LockedCall(RpcEnv& env, grpc::CallbackServerContext* context, const char* method,
                                     const Request* request, Parse parse, Lock lock, Op op) {
  return Dispatch(env, context, method, [request, parse, lock, op](RpcDone done) {
    Result<Parsed> parsed = parse(*request);
    if (!parsed.ok()) return done(parsed.status());
    Result<OpLocks::Guard> guard = lock(*parsed);
    if (!guard.ok()) return done(guard.status());
    op(std::move(*parsed), std::move(*guard), std::move(done));
  });
}

}  // namespace nbdk
