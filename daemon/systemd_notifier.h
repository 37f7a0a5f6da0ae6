// SystemdNotifier: sd_notify(3) READY/STATUS/STOPPING and the watchdog.
//
// Without NOTIFY_SOCKET (not started by systemd) every call is a no-op. When
// the unit sets WatchdogSec, a loop timer sends WATCHDOG=1 at half the
// interval: the pings come from the loop itself, so a stuck loop gets the
// daemon restarted (its rbd-nbd children survive: KillMode=process).
// Loop thread only.
#pragma once

#include <string>

#include "base/event_loop.h"
#include "base/uv_handle.h"

namespace nbdk {

class SystemdNotifier {
 public:
  explicit SystemdNotifier(EventLoop& loop);
  void Ready();
  void SetStatus(const std::string& status);
  void Stopping();
  // Watchdog interval in microseconds, 0 when disabled.
  uint64_t watchdog_usec() const { return watchdog_usec_; }

 private:
  Timer watchdog_;
  uint64_t watchdog_usec_ = 0;
};

}  // namespace nbdk
