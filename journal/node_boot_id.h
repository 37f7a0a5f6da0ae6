// The kernel's boot id: a random UUID chosen at every boot. A journal record
// stores the boot id it was written under; a different id on start means the
// node rebooted, so its rbd-nbd pid and nbd device are stale.
#pragma once

#include <string>

#include "base/status.h"

namespace nbdk {

inline constexpr const char* kBootIdPath = "/proc/sys/kernel/random/boot_id";

// Blocking (a file read; cheap, but call from EventLoop::RunBlocking like all
// file I/O). Returns the 36-character UUID without its newline; Corruption
// when the file does not hold one. `path` is a parameter for tests.
Result<std::string> ReadBootId(const std::string& path = kBootIdPath);

}  // namespace nbdk
