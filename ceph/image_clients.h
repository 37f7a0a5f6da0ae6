// ImageClients: every client of an RBD image at one moment, as the cluster
// reports it (ceph/image_lock.h reads it). Plain data, no librados.
#pragma once

#include <optional>
#include <vector>

#include "ceph/ceph_address.h"

namespace nbdk {

// The header's watchers are the image's read-write opens (a mapped rbd-nbd
// among them; a read-only open has none), the lock owner is the exclusive
// lock's holder. A dead client's watch stays until the OSDs time it out
// (osd_client_watch_timeout, 30 s) or it is blocklisted; its lock stays
// until broken.
struct ImageClients {
  std::vector<CephClient> watchers;
  std::optional<CephClient> lock_owner;
  // The image has the exclusive-lock feature: no client writes without
  // holding the lock. Without it, any watcher may be writing.
  bool exclusive_lock = true;
  // Those of the clients above at one of this host's addresses
  // (IsLocalAddress), as the lister found them: a client elsewhere is
  // never one of this node's rbd-nbd processes.
  std::vector<CephClient> local{};
};

}  // namespace nbdk
