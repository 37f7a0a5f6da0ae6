// RunCommand: a child process run to completion on the loop, its output
// captured (capped) and its exit described, for the one-shot external
// commands (mkfs, mount, blkid, rbd-nbd unmap, ...). Built on ChildProcess:
// argv vectors, never shell strings. Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "base/status.h"

namespace nbdk {

struct CommandOptions {
  uint64_t timeout_ms = 0;  // 0: none. On expiry the child gets SIGKILL.
  std::optional<std::string> stdin_data;
  std::vector<std::string> env;  // empty: inherit ours
  std::string cwd;
  size_t output_cap_bytes = 64 * 1024;  // per stream; the tail is kept
};

struct CommandResult {
  int64_t exit_status = 0;
  int term_signal = 0;
  std::string stdout_text;  // lines joined by '\n', at most output_cap_bytes
  std::string stderr_text;
  bool timed_out = false;
  bool ok() const { return !timed_out && term_signal == 0 && exit_status == 0; }
  // "exit status 1: <last stderr line>", "killed by signal 9",
  // "timed out after the deadline": for Status messages.
  std::string Describe() const;
};

// Runs argv to completion. `done` runs exactly once on the loop thread,
// never from inside RunCommand: a spawn failure as a Status, otherwise the
// result (a non-zero exit is a result, not a Status error). Keeps itself
// alive until `done` has run.
void RunCommand(EventLoop& loop, std::vector<std::string> argv, CommandOptions options,
                std::function<void(Result<CommandResult>)> done);

}  // namespace nbdk
