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

#include "daemon/status.h"
#include "supervisor/image_spec.h"

namespace nbdk {

class LockBreaker {
 public:
  virtual ~LockBreaker() = default;
  // Loop thread only. Calls `done` on the loop thread with OK when no stale
  // lock is left (none found, or broken), or an error saying why not. Never
  // blocks the loop. `done` may run after a long time (cluster calls).
  virtual void BreakDeadOwnerLock(const ImageSpec& image, std::function<void(Status)> done) = 0;
};

}  // namespace nbdk
