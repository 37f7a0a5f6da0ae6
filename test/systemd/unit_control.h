// Test-only: systemd seen from a test inside the systemd VM. Every call runs
// systemctl or journalctl (blocking; an argv, never a shell), so what the
// tests see is what an operator sees.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace nbdk::systemdtest {

// `systemctl ARGS...`: its stdout, or an error naming the command and its
// exit when it fails.
Result<std::string> Systemctl(const std::vector<std::string>& args);

// `systemctl show UNIT -p P...` as a map (a property systemd does not know
// is absent).
Result<std::map<std::string, std::string>> UnitProperties(const std::string& unit,
                                                          const std::vector<std::string>& names);

// The unit's main pid (0 when it has none) and its ActiveState.
struct UnitState {
  pid_t main_pid = 0;
  std::string active_state, sub_state;
};
Result<UnitState> StateOf(const std::string& unit);

// Polls `ready` every 100 ms until it holds or `timeout` passes; the time
// it took, or nullopt-like negative on timeout.
double WaitUntil(const std::function<bool()>& ready, std::chrono::milliseconds timeout);

// Waits until the oneshot `unit` has finished starting (active or failed);
// its ActiveState then, or "" on timeout.
std::string WaitForOneshot(const std::string& unit, std::chrono::milliseconds timeout);

// Waits until `unit` is active with a main pid other than `old_pid`;
// seconds it took, or -1 on timeout.
double WaitForNewMainPid(const std::string& unit, pid_t old_pid, std::chrono::milliseconds timeout);

// The unified cgroup of a process (/proc/PID/cgroup "0::<path>"), "" if gone.
std::string CgroupOf(pid_t pid);

// The first ```sh block after the line `marker` in a Markdown file: the
// commands a docs page gives, run exactly as written.
Result<std::string> MarkdownBlockAfter(const std::string& path, const std::string& marker);

// `journalctl -u UNIT -o json` since this boot: one JSON object per line.
Result<std::vector<std::string>> JournalJson(const std::string& unit);
// `journalctl -b -1 MATCHES... -o json`: the boot before this one (the
// journal must be persistent), e.g. {"-u", "nbdkeeperd"} or {"_PID=1"}.
Result<std::vector<std::string>> PreviousBootJournalJson(const std::vector<std::string>& matches);

}  // namespace nbdk::systemdtest
