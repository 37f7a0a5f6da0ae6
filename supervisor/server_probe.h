// ServerProbe: what the stall watch (stall_rule.h) asks an rbd-nbd whose
// device holds IO without completing it - is the process stopped, and
// which librados ops does it have in flight (its admin socket's
// `objecter_requests`). Reads only; never signals the process.
//
// Each server gets an admin socket at a path nbdkeeper chooses
// (AdminSocketArgv), so the probe finds it from the pid alone, for a child
// and for an adopted server alike. A server started without one (an older
// nbdkeeper's) has no socket there: the probe says so and the rule does
// not guess.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "supervisor/supervisor_config.h"

namespace nbdk {

// The librados ops an rbd-nbd waits on (watches and notifies excluded):
// what the cluster, not the process, holds.
struct LibradosOps {
  size_t count = 0;
  double oldest_age_s = 0;  // of the oldest op; 0 without ops
  std::set<int> osds;       // their target OSDs (-1: none yet, "homeless")
};

struct ServerProbe {
  bool stopped = false;  // state T or t: SIGSTOP, a tracer
  // False when the server has no admin socket at our path.
  bool has_admin_socket = false;
  // The socket took the question but gave no answer within the timeout.
  bool silent = false;
  // Set when the socket answered and the answer could be read.
  std::optional<LibradosOps> ops;
  std::string error;  // why there is no `ops`
};

// The rbd-nbd options giving a server its admin socket under `config`'s
// state directory ("$pid" is expanded by Ceph's config).
std::vector<std::string> AdminSocketArgv(const SupervisorConfig& config);
std::string AdminSocketDir(const SupervisorConfig& config);
std::string AdminSocketPath(const SupervisorConfig& config, int pid);

// Blocking (a pool thread): the process state of `pid` and, unless it is
// stopped, its admin socket's answer within `timeout_ms`.
ServerProbe ProbeServer(const SupervisorConfig& config, int pid, uint64_t timeout_ms);

// The third field of /proc/<pid>/stat (after the parenthesised comm, which
// may hold spaces and parentheses). InvalidArgument otherwise.
Result<char> ParseProcessState(std::string_view stat);
// `objecter_requests` output: {"ops": [{"osd": N, "age": S, ...}], ...}.
// InvalidArgument naming what is wrong.
Result<LibradosOps> ParseObjecterRequests(std::string_view json);

}  // namespace nbdk
