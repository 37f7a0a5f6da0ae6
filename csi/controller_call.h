// LockedCall: how a Controller RPC starts (csi/controller_service.h). Used
// by the service's source files only. Loop thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "csi/op_locks.h"
#include "csi/rpc.h"

namespace nbdk {

// Parses `request`, takes every op lock in `lock_keys(parsed)` and runs
// `op`; a parse error or a held lock finishes the RPC at once (ABORTED
// naming the key). The locks are released when `op` calls its done.
template <typename Parsed, typename Request, typename Parse, typename Keys, typename Op>
grpc::ServerUnaryReactor* LockedCall(RpcEnv& env, OpLocks& locks, grpc::CallbackServerContext* context,
                                     const char* method, const Request* request, Parse parse, Keys lock_keys, Op op) {
  return Dispatch(env, context, method, [&locks, request, parse, lock_keys, op](RpcDone done) {
    Result<Parsed> parsed = parse(*request);
    if (!parsed.ok()) return done(parsed.status());
    auto guards = std::make_shared<std::vector<OpLocks::Guard>>();
    for (const std::string& key : lock_keys(*parsed)) {
      auto lock = locks.Lock(key);
      if (!lock.ok()) return done(lock.status());
      guards->push_back(std::move(*lock));
    }
    op(std::make_shared<Parsed>(std::move(*parsed)), [guards, done](Status s) { done(s); });
  });
}

}  // namespace nbdk
