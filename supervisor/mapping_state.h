// MappingState: the life cycle of one volume's rbd-nbd mapping.
//
//   Mapping --device line--> Connected --child died--> Dead --> Reattaching
//      |                        ^                        ^          |
//      +--exit/deadline--> Failed|            attach failed (backoff) |
//                               +-------- attach printed device ------+
//   Dead/Reattaching --past the reattach deadline--> Expired (never retried)
//   Dead/Reattaching --another client has the image--> Fenced (never retried)
//   Connected/Dead/Reattaching/Expired/Fenced --Unmap/Detach--> Unmapping --> Unmapped
//
// Failed and Unmapped are final: the Supervisor forgets the mapping.
#pragma once

#include <string_view>

namespace nbdk {

enum class MappingState {
  kMapping,      // `rbd-nbd map -f` spawned, device line not seen yet
  kConnected,    // a server process (ours or adopted) serves the device
  kDead,         // the server died unplanned; waiting to (re)try an attach
  kReattaching,  // lock break + `rbd-nbd attach -f` in flight
  kExpired,      // past the reattach deadline: the kernel has given up
  kFenced,       // another client (node) took the image over: never re-attached
  kUnmapping,    // planned unmap or detach in progress
  kUnmapped,     // planned stop finished (final)
  kFailed,       // the initial map never succeeded (final)
};

inline constexpr int kMappingStateCount = 9;

// "Mapping", "Connected", ... (the names /status and /metrics show).
std::string_view MappingStateName(MappingState state);

}  // namespace nbdk
