// Sets an nbd device's block-layer queue timeout (io_timeout, ms).
//
// IO in flight when rbd-nbd dies moves to the re-attached connection only
// when its timer fires, so the longest stall of a death is the re-attach
// time plus up to this value; nothing else from userspace can move it
// sooner, and a short value costs a kernel "Possible stuck request" line
// per tick for IO a slow cluster holds (docs/design/kernel-timeouts.md). The
// value survives a re-attach, so it is written once after the map.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/event_loop.h"
#include "base/status.h"

namespace nbdk {

// "<sysfs_root>/block/nbdN/queue/io_timeout" for "/dev/nbdN".
Result<std::string> IoTimeoutPath(const std::string& sysfs_root, const std::string& device);

// Loop thread only. Writes `timeout_ms` on a pool thread (sysfs writes can
// block), then calls `done` on the loop with OK or the error naming the file.
void WriteIoTimeout(EventLoop& loop, const std::string& sysfs_root, const std::string& device, uint32_t timeout_ms,
                    std::function<void(Status)> done);

}  // namespace nbdk
