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
// it.
//
// Loop thread only; `node` outlives it.
#pragma once

#include <set>
#include <string>

#include "csi/node_context.h"
#include "base/uv_handle.h"

namespace nbdk {

class ServerJournal {
 public:
  // Registers with node.supervisor (SetServerChanged).
  explicit ServerJournal(NodeContext& node);
  ~ServerJournal();
  ServerJournal(const ServerJournal&) = delete;
  ServerJournal& operator=(const ServerJournal&) = delete;

 private:
  void Record(const std::string& volume_id);
  void RetryWaiting();

  NodeContext& node_;
  std::set<std::string> waiting_;  // volumes whose lock was busy
  Timer retry_;
};

}  // namespace nbdk
