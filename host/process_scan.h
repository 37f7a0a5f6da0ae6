// ProcessScan: what /proc says about the host's processes. One walk over
// its pid directories (ForEachProcess), shared by the scan for openers of
// a device (host/device_users.h) and the scan for rbd-nbd servers below:
// the heal adopts those that serve a journaled volume (csi/heal/heal_plan.h),
// and the CLI refuses to map an image one it did not start serves
// (daemon/ctl/foreign_mappings.h).
//
// Everything here BLOCKS on file reads of `proc_root` ("/proc" in
// production, a directory in tests). A process that exits during a walk is
// passed over, or kept with what could be read of it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace nbdk {

// A process directory of /proc: its pid and "<proc_root>/<pid>".
using ProcessVisitor = std::function<void(int pid, const std::string& pid_dir)>;

// Calls `visit` for every process directory of `proc_root` (numeric names
// only), in directory order. The error of listing `proc_root` (NotFound
// when it is missing).
Status ForEachProcess(const std::string& proc_root, const ProcessVisitor& visit);

// /proc/<pid>/cmdline ("a\0b\0") -> {"a", "b"}.
std::vector<std::string> ParseCmdline(std::string_view raw);

// Whether a process's argv[0] names rbd-nbd (any directory): the first
// filter over /proc before a command line is read back.
bool IsRbdNbdProgram(std::string_view argv0);

// A process whose argv[0] names rbd-nbd, as /proc showed it.
struct RbdNbdProcess {
  int pid = 0;
  std::vector<std::string> argv;
  std::string exe;    // /proc/<pid>/exe's target; empty when unreadable
  int64_t uid = -1;   // real uid (/proc/<pid>/status); -1 when unreadable
  int64_t euid = -1;  // effective uid
};

// Every process whose argv[0] IsRbdNbdProgram, with its exe link and uids
// (left empty / -1 when unreadable: such a process is never adopted).
// ForEachProcess's error if `proc_root` cannot be listed.
Result<std::vector<RbdNbdProcess>> ScanRbdNbdProcesses(const std::string& proc_root);

}  // namespace nbdk
