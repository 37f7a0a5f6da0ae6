// Watching the daemon heal, through its health endpoint only.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace nbdk::chaos {

// The volume's rbd-nbd as /status shows it before an injection.
struct ServerSeen {
  int pid = 0;
  uint64_t restarts = 0;
  std::string device;
};
Result<ServerSeen> SeeServer(int health_port, const std::string& volume_id);

// Waits until /status shows the volume Connected again with one restart
// more than `before`, on the same device. Returns the heal latency: from
// `killed` to the moment it became Connected (now minus seconds_in_state).
Result<double> WaitReattached(int health_port, const std::string& volume_id, const ServerSeen& before,
                              std::chrono::steady_clock::time_point killed, std::chrono::seconds timeout);

// Waits until every listed volume is Connected (after a daemon restart).
Status WaitAllConnected(int health_port, const std::vector<std::string>& volume_ids, std::chrono::seconds timeout);

}  // namespace nbdk::chaos
