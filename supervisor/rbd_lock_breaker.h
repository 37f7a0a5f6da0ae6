// RbdLockBreaker: the LockBreaker that talks to the cluster through librbd.
//
// The rule (what makes a lock "our own dead process's"):
//  (a) The caller calls BreakDeadOwnerLock() only after it saw the rbd-nbd
//      child it runs for this image die, and starts the replacement
//      (rbd-nbd attach) only from `owner_seen`. nbdkeeper is the only
//      mapper of the image on this host, so a lock held from this host
//      when the call started is the dead child's, and only that owner is
//      ever broken.
//  (b) The exclusive-lock owner's address (rbd_lock_get_owners) is checked
//      with IsLocalAddress() against this host's interface addresses
//      (getifaddrs, loopback included). An owner on any other host, or one
//      whose address does not parse, is never touched: FailedPrecondition
//      naming the owner.
//  (c) No owner (or an image without the exclusive-lock feature): OK,
//      nothing to break.
// Every doubt resolves to "not ours": in a container without host
// networking, or behind NAT, the owner's address is not among the
// interface addresses, so nothing is broken and IO resumes only after the
// watch timeout - slow, never unsafe. (a) is what makes a local owner safe
// to fence: another writer of the image on this host (a second mapping, a
// krbd or qemu client) would be fenced too.
// Otherwise rbd_lock_break(EXCLUSIVE, owner). librbd then blocklists the
// owner's address first (rbd_blocklist_on_break_lock, default true; the
// cephx user needs the mon caps of `profile rbd` for "osd blocklist") and
// removes the lock only if the owner is still the one we saw (else EBUSY,
// reported as Aborted). The blocklist also ends the dead client's stale
// watch: an OSD taking the new OSD map drops every watch of a blocklisted
// client (PrimaryLogPG::check_blocklisted_obc_watchers ->
// handle_watch_timeout) instead of waiting for the 30 s watch timeout. The
// dead client's address carries a random nonce, so the blocklist never
// hits the replacement rbd-nbd.
//
// Two steps, so the outage is not the sum of both:
//  1. Who owns the lock: the image id from its rbd_id object, then the
//     RADOS lock "rbd_lock" on rbd_header.<id> (two round trips, no image
//     open). Then `owner_seen`, and the caller starts the attach.
//  2. Beside the attach: open the image read-write (rbd_open; librbd
//     refuses lock_break on a read-only handle, -EROFS; opening adds a
//     short-lived watch of our own and never takes the lock) and
//     rbd_lock_break(owner from step 1).
//
// Every call logs one `lock_break` event: image, owner, owner_watches,
// owner_seen_ms (step 1), duration_ms (both), outcome.
#pragma once

#include <functional>

#include "daemon/base/event_loop.h"
#include "journal/rados_clients.h"
#include "journal/rados_config.h"
#include "supervisor/lock_breaker.h"

namespace nbdk {

// The RadosConfig that reaches `image`'s cluster as its user, each cluster
// operation bounded by `timeout_s`.
RadosConfig RadosConfigForImage(const ImageSpec& image, int timeout_s);

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
