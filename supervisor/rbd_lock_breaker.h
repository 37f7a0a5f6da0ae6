// RbdLockBreaker: the LockBreaker that talks to the cluster through librbd.
//
// ListClients reads the exclusive lock's owner (rbd_id, then the RADOS lock
// on rbd_header.<id>) and the header's watchers (a read-only open, which
// adds no watcher). BreakLock breaks the named owner's lock, which the
// caller chose by supervisor/image_fence.h (one of its volume's own dead
// rbd-nbd processes), and checks once more that its address is one of this
// host's (IsLocalAddress): an owner elsewhere is never touched,
// FailedPrecondition naming it. It opens the image read-write and calls
// rbd_lock_break(EXCLUSIVE, owner), which blocklists the owner; librbd
// refuses when the lock moved meanwhile. Every break logs one `lock_break`
// event (image, owner, owner_watches, duration_ms, outcome). Why this is
// safe, and what librbd does on a break: docs/design/lock-breaking.md.
#pragma once

#include <functional>

#include "base/event_loop.h"
#include "ceph/rados_clients.h"
#include "ceph/rados_config.h"
#include "supervisor/lock_breaker.h"

namespace nbdk {

class RbdLockBreaker : public LockBreaker {
 public:
  // `loop` must outlive every call in flight; a call whose `clients` is
  // destroyed before its connection is made never completes. The breaker
  // itself may go first. `timeout_s` bounds each cluster operation
  // (connect, open, lock calls).
  RbdLockBreaker(EventLoop& loop, RadosClients& clients, int timeout_s = 10);

  // Loop thread only; see LockBreaker. Errors name the image
  // (pool/[ns/]image): InvalidArgument (no pool or image), NotFound (pool
  // or image), or the cluster's error; BreakLock also FailedPrecondition
  // (an owner not on this host, missing blocklist caps) and Aborted (the
  // lock changed hands meanwhile).
  void ListClients(const ImageSpec& image, std::function<void(Result<ImageClients>)> done) override;
  void BreakLock(const ImageSpec& image, const CephClient& owner, std::function<void(Status)> done) override;

 private:
  // Connects as the image's user and runs `work(cluster)` on the pool;
  // `done(result)` on the loop. The cluster reference is dropped on the
  // pool thread.
  template <typename T>
  void OnCluster(const ImageSpec& image, const char* what,
                 std::function<Result<T>(const std::shared_ptr<RadosCluster>&)> work,
                 std::function<void(Result<T>)> done);

  EventLoop& loop_;
  RadosClients& clients_;
  int timeout_s_;
};

}  // namespace nbdk
