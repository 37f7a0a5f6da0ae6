// MappingSnapshot: a copy of one mapping's state for /status.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ceph/ceph_address.h"
#include "supervisor/mapping_state.h"

namespace nbdk {

// Where a mapping's rbd-nbd process lives (supervisor/child_scope.h).
enum class CgroupMode {
  kDaemon,  // the daemon's cgroup: dies with its container or unit, healed by re-attach
  kScope,   // a systemd scope of its own: keeps serving through a daemon stop or kill
};
inline const char* CgroupModeName(CgroupMode m) { return m == CgroupMode::kScope ? "scope" : "daemon"; }

struct MappingSnapshot {
  std::string volume_id;
  std::string image;  // "pool/[ns/]image"
  std::string snap;   // the snapshot mapped; "" for the image itself
  MappingState state = MappingState::kMapping;
  std::string reason;  // why it entered `state`
  uint64_t ms_in_state = 0;
  std::string device;    // "/dev/nbdN"; empty until the map printed it
  int pid = 0;           // the serving (or map/attach) process; 0: none
  bool adopted = false;  // the server is not our child (pidfd watch)
  CgroupMode cgroup_mode = CgroupMode::kDaemon;
  std::string scope;          // kScope: the unit
  std::string cgroup_reason;  // kDaemon: why not in a scope (yet)
  std::string cookie;
  // The Ceph clients of this volume's rbd-nbd processes, past and present,
  // sorted (supervisor/image_fence.h).
  std::vector<CephClient> own_clients;
  // While the current server's own clients are not known yet: the image's
  // clients when it was started (journaled, for an adoption meanwhile).
  std::optional<std::vector<CephClient>> clients_before_server;
  uint32_t restarts = 0;         // successful re-attaches since the map
  uint32_t attach_attempts = 0;  // attempts in the current outage
  // Mapping/Dead: waiting for an attach slot at this place (1: next); 0:
  // not waiting (supervisor/attach_queue.h).
  size_t attach_queue_position = 0;
  // Of the last rbd-nbd process that exited; unset if none did or its
  // status is unknowable (adopted).
  std::optional<int64_t> last_exit_status;
  int last_term_signal = 0;
  // The last lines that process wrote to stderr (raw rbd-nbd output, like
  // output_tail: /status shows neither unless configured to).
  std::string last_exit_output;
  // Dead/Reattaching: ms left before attempts stop (0: already past).
  std::optional<uint64_t> reattach_ms_left;
  // Connected: the stall watch's latest verdict when the device holds IO
  // past the limit (who holds it, or why the server was ended); empty
  // while IO flows (stall_rule.h).
  std::string io_stall;
  std::vector<std::string> output_tail;  // oldest first
  std::string log_path;
};

}  // namespace nbdk
