// How nbdkeeperctl reaches nbdkeeperd: only its public interfaces, the CSI
// socket (gRPC) and the health endpoint (HTTP). Blocking calls: the CLI
// does one thing at a time.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "csi/proto/csi.grpc.pb.h"
#include "daemon/config.h"
#include "daemon/ctl/ctl_args.h"
#include "daemon/ctl/http_reply.h"
#include "daemon/ctl/volume_table.h"

namespace nbdk::ctl {

// Exit statuses (documented in CtlUsage and docs/operate/bare-metal.md).
enum Exit : int {
  kExitOk = 0,
  kExitFailed = 1,
  kExitUsage = 2,
  kExitNotRunning = 3,
  kExitNoPermission = 4,
  kExitNotFound = 5,
  kExitNotHealthy = 6,
};

// A failure with the exit status it ends the command with.
struct CtlError {
  int exit = kExitFailed;
  std::string message;
};

// The config file the units give nbdkeeperd, read when --config is not given
// and it exists.
inline constexpr char kDefaultConfigFile[] = "/etc/nbdkeeper/config.json";

// The daemon's settings the CLI needs: flags, else the daemon's config file
// (--config, else kDefaultConfigFile), else the daemon's defaults (one
// parser: daemon/config.h).
Result<Config> DaemonSettings(const GlobalOptions& global);

class DaemonClient {
 public:
  // Checks that something accepts on the socket first, so that "not
  // running" and "no permission" are told apart from a refused call.
  static Result<DaemonClient> Open(const Config& daemon, CtlError* error);

  csi::v1::Node::Stub& node() { return *node_; }
  csi::v1::Controller::Stub& controller() { return *controller_; }
  // GET `path` from the health endpoint (5 s timeout).
  Result<HttpAnswer> Get(const std::string& path) const;
  // GET /status, parsed: Unavailable when it does not answer 200.
  Result<DaemonStatus> GetStatus() const;
  // Polls /readyz until 200 or `timeout_ms`; the daemon answers volume calls
  // only once it has healed its journaled volumes.
  bool WaitReady(int timeout_ms) const;

 private:
  DaemonClient(std::shared_ptr<grpc::Channel> channel, HostPort health);

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<csi::v1::Node::Stub> node_;
  std::unique_ptr<csi::v1::Controller::Stub> controller_;
  HostPort health_;
};

// A gRPC answer as a CtlError naming what was done: NOT_FOUND or a missing
// image -> exit 5, anything else -> exit 1 with the daemon's message
// and, for the errors rbd-nbd reports in it, what to do about them.
CtlError FromGrpc(const grpc::Status& status, const std::string& what);

}  // namespace nbdk::ctl
