// RbdLockBreaker: the LockBreaker that talks to the cluster through librbd.
//
// Breaks only the exclusive lock of an owner on this host, and only after
// the caller saw that host's rbd-nbd for the image die:
//  - owner address among this host's interface addresses (IsLocalAddress):
//    broken with rbd_lock_break(EXCLUSIVE, owner), which blocklists it;
//  - owner elsewhere, or its address does not parse: never touched,
//    FailedPrecondition naming it;
//  - no owner, or no exclusive-lock feature: OK, nothing to break.
// Step 1 (rbd_id, then the RADOS lock on rbd_header.<id>; no image open)
// finds the owner and runs `owner_seen`; step 2 opens the image read-write
// and breaks that owner beside the caller's attach. Every call logs one
// `lock_break` event (image, owner, owner_watches, owner_seen_ms,
// duration_ms, outcome). Why this is safe, and what librbd does on a break:
// docs/lock-breaking.md.
#pragma once

#include <functional>

#include "daemon/base/event_loop.h"
#include "journal/ceph/rados_clients.h"
#include "journal/ceph/rados_config.h"
#include "supervisor/lock_breaker.h"

namespace nbdk {

class RbdLockBreaker : public LockBreaker {
 public:
  // `loop` must outlive every call in flight; a call whose `clients` is
  // destroyed before its connection is made never completes. The breaker
  // itself may go first. `timeout_s` bounds each cluster operation
  // (connect, open, lock calls).
  RbdLockBreaker(EventLoop& loop, RadosClients& clients, int timeout_s = 10);

  // Loop thread only; see LockBreaker and the rule above. Errors name the image
  // (pool/[ns/]image) and, for a foreign owner, its address:
  // InvalidArgument (no pool or image), FailedPrecondition (foreign or
  // unparsable owner, missing blocklist caps), Aborted (the lock changed
  // hands meanwhile), NotFound (pool or image), or the cluster's error.
  void BreakDeadOwnerLock(const ImageSpec& image, std::function<void()> owner_seen,
                          std::function<void(Status)> done) override;

 private:
  EventLoop& loop_;
  RadosClients& clients_;
  int timeout_s_;
};

}  // namespace nbdk
