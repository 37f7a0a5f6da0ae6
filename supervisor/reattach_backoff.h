// Delays between re-attach attempts of one outage.
#pragma once

#include <algorithm>
#include <cstdint>

namespace nbdk {

// Delay before attempt `attempt` (0-based): 0 for the first (re-attach at
// once: the kernel's dead-connection timer is already running), then
// initial, 2*initial, 4*initial ... capped at cap_ms.
inline uint64_t ReattachDelayMs(uint32_t attempt, uint64_t initial_ms, uint64_t cap_ms) {
  if (attempt == 0) return 0;
  uint64_t delay = initial_ms;
  for (uint32_t i = 1; i < attempt && delay < cap_ms; ++i) delay *= 2;
  return std::min(delay, cap_ms);
}

}  // namespace nbdk
