// ServerJournal: keeps each staged volume's journaled server - the
// rbd_nbd_pid and the rbd-nbd processes' Ceph clients (rbd_clients) - in
// step with the supervisor (Supervisor::SetServerChanged):
//  - the pid of the `rbd-nbd attach` a re-attach spawned: after a daemon
//    restart only a journaled attach is adopted (sysfs still names the
//    original map: csi/heal/heal_plan.h), so without it a restart after any
//    re-attach would leave the volume's server unsupervised;
//  - the volume's own clients (supervisor/image_fence.h): without them, a
//    restarted daemon would take its own dead rbd-nbd's watch for another
//    node's and fence the volume.
//
// The update takes the volume's operation lock like a CSI call. While
// another holder has it (a heal, a publish), it is retried every second
// for as long as the record is staged; an unstage in between simply ends
// it. A write that fails (the state directory full, a journal read-only
// after an fsync failure) is logged and retried every `write_retry_ms`
// until it lands: the volume stays served meanwhile, from memory, and only
// a daemon restart needs the record. A heal's re-attach reaches the
// journal this way too (csi/heal/volume_healer.h).
//
// Loop thread only; `node` outlives it.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "base/uv_handle.h"
#include "csi/node/node_context.h"

namespace nbdk {

class ServerJournal {
 public:
  // Registers with node.supervisor (SetServerChanged).
  explicit ServerJournal(NodeContext& node, uint64_t write_retry_ms = 10000);
  ~ServerJournal();
  ServerJournal(const ServerJournal&) = delete;
  ServerJournal& operator=(const ServerJournal&) = delete;

 private:
  void Record(const std::string& volume_id);
  // Records `volume_id` again when `timer` fires, with every other volume
  // waiting in `waiting`.
  void RetryLater(const std::string& volume_id, std::set<std::string>& waiting, Timer& timer, uint64_t ms);

  NodeContext& node_;
  const uint64_t write_retry_ms_;
  std::set<std::string> lock_busy_;     // volumes whose lock was busy
  std::set<std::string> write_failed_;  // volumes whose last write failed
  Timer lock_retry_;
  Timer write_retry_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for writes in flight
};

}  // namespace nbdk
