// LockBreaker: what the cluster says of an image's clients, and removal of
// the exclusive lock a dead rbd-nbd of ours left on it.
//
// A SIGKILLed rbd-nbd keeps owning the image's exclusive lock and watch until
// the OSDs time its watch out (~30 s); a re-attached rbd-nbd cannot write
// until then. Breaking the lock (which blocklists the dead client) lets IO
// resume in seconds. Breaking a LIVE client's lock would fence a healthy
// writer: whose lock may be broken is decided from ListClients by the rule
// in supervisor/image_fence.h, and an implementation says in its header
// what it checks again before it breaks.
#pragma once

#include <functional>

#include "base/event_loop.h"
#include "base/status.h"
#include "ceph/image_clients.h"
#include "ceph/image_spec.h"

namespace nbdk {

class LockBreaker {
 public:
  virtual ~LockBreaker() = default;
  // Loop thread only; never blocks the loop. `done` runs on the loop
  // thread, later, never inside the call, exactly once; it may run after a
  // long time (cluster calls).

  // The image's watchers and lock owner now.
  virtual void ListClients(const ImageSpec& image, std::function<void(Result<ImageClients>)> done) = 0;

  // Breaks `owner`'s exclusive lock on `image`, and only that owner's: OK
  // when no stale lock is left (broken, or already gone), or an error
  // saying why not.
  virtual void BreakLock(const ImageSpec& image, const CephClient& owner, std::function<void(Status)> done) = 0;
};

// A LockBreaker that lists through another and never breaks (the daemon's
// break_dead_locks=false): a re-attach then leaves the dead client's lock
// to time out on its own (~30 s). The clients are still listed: the fence
// (supervisor/image_fence.h) is not optional.
class ListOnlyLockBreaker final : public LockBreaker {
 public:
  ListOnlyLockBreaker(EventLoop& loop, LockBreaker& lister) : loop_(loop), lister_(lister) {}
  void ListClients(const ImageSpec& image, std::function<void(Result<ImageClients>)> done) override {
    lister_.ListClients(image, std::move(done));
  }
  // OK at once (posted: never inside the call), breaking nothing.
  void BreakLock(const ImageSpec&, const CephClient&, std::function<void(Status)> done) override {
    loop_.Post([done = std::move(done)] { done(Status::Ok()); });
  }

 private:
  EventLoop& loop_;
  LockBreaker& lister_;
};

}  // namespace nbdk
