// AttachPidJournal: keeps each staged volume's journaled rbd_nbd_pid on the
// `rbd-nbd attach` a re-attach spawned. After a daemon restart only a
// journaled attach is adopted (sysfs still names the original map:
// csi/heal/heal_plan.h), so without this a restart after any re-attach would
// leave the volume's server unsupervised.
//
// The update takes the volume's operation lock like a CSI call. While
// another holder has it (a heal, a publish), it is retried every second
// for as long as that pid is still the mapping's server and the record is
// staged; an unstage in between simply ends it.
//
// Loop thread only; `node` outlives it.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "csi/node_context.h"
#include "daemon/base/uv_handle.h"

namespace nbdk {

class AttachPidJournal {
 public:
  // Registers with node.supervisor (SetAttachSpawned).
  explicit AttachPidJournal(NodeContext& node);
  ~AttachPidJournal();
  AttachPidJournal(const AttachPidJournal&) = delete;
  AttachPidJournal& operator=(const AttachPidJournal&) = delete;

 private:
  void Record(const std::string& volume_id, int pid);
  void RetryWaiting();

  NodeContext& node_;
  std::map<std::string, int> waiting_;  // volume -> attach pid, lock was busy
  Timer retry_;
};

}  // namespace nbdk
