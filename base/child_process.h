// ChildProcess: one child spawned with uv_spawn, its stdout and stderr read
// line by line on the loop thread (a one-shot command run to completion is
// RunCommand, base/command.h).
//
// Commands are argv vectors, never shell strings. libuv owns SIGCHLD: exit
// status comes from its exit callback, nothing here calls waitpid(-1).
//
// All of this is loop thread only.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/event_loop.h"
#include "base/status.h"
#include "base/uv_handle.h"

namespace nbdk {

enum class OutputStream { kStdout, kStderr };
// "stdout" / "stderr".
std::string_view OutputStreamName(OutputStream stream);

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is the program (PATH is searched)
  std::vector<std::string> env;   // "KEY=VALUE" each; empty: inherit ours
  std::string cwd;                // empty: inherit ours
  // Written to the child's stdin, which is then closed. nullopt: /dev/null.
  std::optional<std::string> stdin_data;
  // Own session (setsid): a terminal's Ctrl-C or a signal to our process
  // group does not reach the child. Used for rbd-nbd servers that must
  // outlive the daemon.
  bool new_session = false;
  // Signal sent by the destructor if the child is still running; 0 (the
  // default) leaves it running.
  int kill_signal_on_destroy = 0;
  // Longer lines are delivered in pieces of this size.
  size_t max_line_bytes = 16 * 1024;
  // After the child exits, how long to wait for end-of-file on its pipes
  // (a grandchild may keep them open) before reporting the exit anyway.
  uint64_t exit_drain_ms = 500;
};

struct ExitInfo {
  int64_t exit_status = 0;  // meaningful when term_signal == 0
  int term_signal = 0;      // 0: exited normally
};

class ChildProcess {
 public:
  // A line without its trailing newline ("\r\n" is trimmed too).
  using LineCallback = std::function<void(OutputStream stream, std::string_view line)>;
  using ExitCallback = std::function<void(const ExitInfo& exit)>;

  // Starts `options.argv`. `on_line` gets every output line; `on_exit` runs
  // once, after the last line (both pipes at end-of-file, or exit_drain_ms
  // after the exit). Either callback may destroy this object. On failure
  // (missing program, bad cwd, no argv) nothing is left running and the
  // callbacks are never called.
  static Result<std::unique_ptr<ChildProcess>> Spawn(EventLoop& loop, SpawnOptions options, LineCallback on_line,
                                                     ExitCallback on_exit);

  // Closes the pipes and the process handle; no callback runs afterwards.
  // A running child keeps running (unless kill_signal_on_destroy is set):
  // libuv's uv_close on a process handle does not kill, but nobody reaps
  // the child any more, so it stays a zombie after it exits until this
  // daemon exits (then init reaps it). Use this only when the daemon is
  // leaving the child behind on purpose.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  int pid() const { return pid_; }
  // True once libuv reported the exit (even if on_exit has not run yet).
  bool exited() const { return exit_.has_value(); }
  // Sends `signum`. FailedPrecondition after the child exited (its pid may
  // already belong to someone else).
  Status Kill(int signum);

 private:
  struct ProcessState {
    ChildProcess* owner = nullptr;
  };
  struct PipeState {
    ChildProcess* owner = nullptr;
    OutputStream stream = OutputStream::kStdout;
    std::string partial;  // bytes after the last newline
    std::vector<char> buffer;
    bool eof = false;
  };
  struct StdinState {
    std::string data;
    uv_write_t req{};
  };

  ChildProcess(EventLoop& loop, SpawnOptions options, LineCallback on_line, ExitCallback on_exit);
  Status Start();
  Status StartReading(OwnedHandle<uv_pipe_t, PipeState>& pipe);
  void OnRead(uv_stream_t* stream, PipeState& pipe, ssize_t nread, const uv_buf_t* buf);
  // Emits complete lines of `pipe.partial`; with `flush`, the rest too.
  // Returns false if a callback destroyed this object.
  bool EmitLines(PipeState& pipe, bool flush);
  void OnExit(int64_t exit_status, int term_signal);
  void MaybeDeliverExit();
  void DeliverExit();

  EventLoop& loop_;
  SpawnOptions options_;
  LineCallback on_line_;
  ExitCallback on_exit_;
  OwnedHandle<uv_process_t, ProcessState> process_;
  OwnedHandle<uv_pipe_t, PipeState> stdout_;
  OwnedHandle<uv_pipe_t, PipeState> stderr_;
  OwnedHandle<uv_pipe_t, StdinState> stdin_;
  std::unique_ptr<Timer> drain_timer_;
  int pid_ = 0;
  std::optional<ExitInfo> exit_;
  bool delivered_ = false;
  // Flipped by the destructor so a loop over callbacks can stop in time.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace nbdk
