// RunLoop: runs an EventLoop for a bounded time, for tests that wait for
// callbacks (LINK_DEAD) after blocking work done outside the loop.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>

#include "base/event_loop.h"
#include "base/uv_handle.h"

namespace nbdk::testing {

// Runs `loop` until a callback calls loop.Stop() or `limit` passes.
// libuv times a timer from the loop's cached clock, which only advances while
// the loop runs: after seconds of blocking calls (rbd-nbd map, STATUS) a
// timer started from the stale clock is already due and would stop the loop
// at once, before any event could arrive. Refresh the clock first.
inline void RunLoop(EventLoop& loop, std::chrono::milliseconds limit) {
  uv_update_time(loop.uv());
  Timer deadline(loop);
  deadline.Start(static_cast<uint64_t>(limit.count()), 0, [&] { loop.Stop(); });
  loop.Run();
}

}  // namespace nbdk::testing
