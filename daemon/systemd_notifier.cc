#include "daemon/systemd_notifier.h"

#include <systemd/sd-daemon.h>

#include <algorithm>

#include "base/log.h"

namespace nbdk {

SystemdNotifier::SystemdNotifier(EventLoop& loop) : watchdog_(loop) {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
    watchdog_usec_ = usec;
    uint64_t every_ms = std::max<uint64_t>(usec / 2000, 1);
    watchdog_.Start(every_ms, every_ms, [] { sd_notify(0, "WATCHDOG=1"); });
    NBDK_LOG_INFO("systemd_watchdog", {{"interval_ms", usec / 1000}});
  }
}

void SystemdNotifier::Ready() { sd_notify(0, "READY=1"); }

void SystemdNotifier::SetStatus(const std::string& status) { sd_notify(0, ("STATUS=" + status).c_str()); }

void SystemdNotifier::Stopping() {
  watchdog_.Stop();
  sd_notify(0, "STOPPING=1");
}

}  // namespace nbdk
