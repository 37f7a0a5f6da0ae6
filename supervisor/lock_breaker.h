// LockBreaker: removes the exclusive lock a dead rbd-nbd left on its image.
//
// A SIGKILLed rbd-nbd keeps owning the image's exclusive lock and watch until
// the OSDs time its watch out (~30 s); a re-attached rbd-nbd cannot write
// until then. Breaking the lock (which blocklists the dead client) lets IO
// resume in seconds. Breaking a LIVE client's lock would fence a healthy
// writer, so an implementation only breaks locks it can tie to this host's
// dead process, and says in its header how it decides that.
#pragma once

#include <functional>

#include "daemon/base/status.h"
#include "journal/ceph/image_spec.h"

namespace nbdk {

class LockBreaker {
 public:
  virtual ~LockBreaker() = default;
  // Loop thread only; never blocks the loop. Two steps, so the caller can
  // start the replacement rbd-nbd between them:
  //  - `owner_seen` runs once the lock's owner at the time of the call is
  //    known (or could not be read). The break only ever names that owner,
  //    and a replacement started after this call cannot own the lock then
  //    (it has no lock before its first write, and none while the dead
  //    owner holds it), so starting it now can never get it fenced.
  //  - `done` runs after it, with OK when no stale lock is left (none
  //    found, or broken), or an error saying why not. It may run after a
  //    long time (cluster calls).
  // Both run on the loop thread, later, never inside this call; each runs
  // exactly once.
  virtual void BreakDeadOwnerLock(const ImageSpec& image, std::function<void()> owner_seen,
                                  std::function<void(Status)> done) = 0;
};

}  // namespace nbdk
