// Sets an nbd device's block-layer queue timeout (io_timeout, ms).
//
// In-flight IO of a dead connection is requeued to the re-attached one only
// when this timer fires (kernel default 30000 ms); the value survives a
// re-attach, so it is written once after the map.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "daemon/event_loop.h"
#include "daemon/status.h"

namespace nbdk {

// "<sysfs_root>/block/nbdN/queue/io_timeout" for "/dev/nbdN".
Result<std::string> IoTimeoutPath(const std::string& sysfs_root, const std::string& device);

// Loop thread only. Writes `timeout_ms` on a pool thread (sysfs writes can
// block), then calls `done` on the loop with OK or the error naming the file.
void WriteIoTimeout(EventLoop& loop, const std::string& sysfs_root, const std::string& device,
                    uint32_t timeout_ms, std::function<void(Status)> done);

}  // namespace nbdk
