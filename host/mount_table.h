// MountTable: what is mounted where, from /proc/self/mountinfo - read by
// the Node (unstage), the heal (remounts), the device users
// (host/device_users.h) and the CLI (a forced unmap).
//
// Parsing is util-linux's libmount. Reading the file is blocking (call in
// EventLoop::RunBlocking); parsing is pure and tested on its own. Paths come
// back unescaped (mountinfo writes space, tab, newline and backslash as \ooo
// octal).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace nbdk {

struct MountEntry {
  std::string root;  // path inside the source filesystem ("/" or a bind's subpath)
  std::string mount_point;
  std::string fs_type;
  std::string source;   // e.g. /dev/nbd0
  std::string options;  // per-mount options, e.g. "rw,relatime"
  bool read_only() const;
};

// A malformed line is Corruption naming its line number; text that is not
// mountinfo at all (an fstab, say) is Corruption saying so. Blank lines are
// skipped.
Result<std::vector<MountEntry>> ParseMountInfo(std::string_view text);
Result<std::vector<MountEntry>> ReadMountTable(const std::string& path = "/proc/self/mountinfo");

// The last (top-most) mount at `mount_point`, or nullptr.
const MountEntry* FindMount(const std::vector<MountEntry>& table, std::string_view mount_point);

}  // namespace nbdk
