// Sets an nbd device's block-layer queue timeout (io_timeout, ms).
//
// In-flight IO of a dead connection is requeued to the re-attached one only
// when this timer fires (kernel default 30000 ms); the value survives a
// re-attach, so it is written once after the map. With rbd-nbd's own
// timeout at 0, the kernel (nbd_xmit_timeout) requeues a timed-out request
// only if its socket was replaced meanwhile, and otherwise logs "Possible
// stuck request" and re-arms the timer: IO in flight at a death resumes at
// the first tick after the re-attach, so the longest stall is about the
// re-attach time rounded up to a multiple of this value. A small value
// only costs that log line per tick for IO a slow cluster holds.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "daemon/base/event_loop.h"
#include "daemon/base/status.h"

namespace nbdk {

// "<sysfs_root>/block/nbdN/queue/io_timeout" for "/dev/nbdN".
Result<std::string> IoTimeoutPath(const std::string& sysfs_root, const std::string& device);

// Loop thread only. Writes `timeout_ms` on a pool thread (sysfs writes can
// block), then calls `done` on the loop with OK or the error naming the file.
void WriteIoTimeout(EventLoop& loop, const std::string& sysfs_root, const std::string& device,
                    uint32_t timeout_ms, std::function<void(Status)> done);

}  // namespace nbdk
