// CsiServer: the gRPC server on the CSI unix socket.
//
// Start() refuses to run beside a live daemon (something accepts on the
// socket: AlreadyExists "already running"), replaces a stale socket file left
// by a crashed run, and creates the socket with the configured mode (the
// umask is tightened while binding, so there is no window where the socket is
// more open than asked). Stop() is blocking (it waits for in-flight RPCs,
// which finish on the loop), so the daemon calls it from a separate thread.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace nbdk {

struct CsiServerOptions {
  std::string socket_path;
  uint32_t socket_mode = 0600;
  std::string socket_group;  // empty: keep the daemon's group
};

class CsiServer {
 public:
  // Services must outlive the server.
  static Result<std::unique_ptr<CsiServer>> Start(const CsiServerOptions& options,
                                                  const std::vector<grpc::Service*>& services);
  // Use Start(); public only for std::make_unique.
  CsiServer(std::string path, std::unique_ptr<grpc::Server> server);
  ~CsiServer();

  // Any thread but the loop. Stops accepting, waits up to `grace_ms` for
  // in-flight RPCs, cancels the rest, and removes the socket file.
  void Stop(int grace_ms);

 private:
  std::string path_;
  std::unique_ptr<grpc::Server> server_;
  bool stopped_ = false;
};

// Exposed for tests: OK when `path` is free to bind (absent, or a stale
// socket that was removed).
Status ClaimSocketPath(const std::string& path);

}  // namespace nbdk
