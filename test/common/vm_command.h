// Child processes for the VM tests: posix_spawnp with an argv (never a
// shell), stdout captured through a pipe, stderr inherited (it lands in the
// VM log). Test-only, blocking.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "base/command.h"
#include "base/status.h"

namespace nbdk::vmtest {

// "rbd create ..." as one line, for messages.
std::string JoinArgv(const std::vector<std::string>& argv);

// How a child ended: exit code, or -signal when killed by a signal.
struct Exit {
  int code = 0;
  std::string ToString() const;
};

struct CommandOutput {
  Exit exit;
  std::string stdout_text;
};

// Runs `argv` to completion; with `merge_stderr`, its stderr lands in
// stdout_text too (for checking a CLI's messages). `stdin_path`, when not
// empty, is the child's stdin (a secret for `-d /dev/stdin` stays in its
// 0600 file, out of argv).
Result<CommandOutput> RunCommand(const std::vector<std::string>& argv, bool merge_stderr = false,
                                 const std::string& stdin_path = "");

// A running child with its stdout on a pipe. The destructor SIGKILLs and
// reaps a child that is still running.
class SpawnedChild {
 public:
  static Result<SpawnedChild> Spawn(const std::vector<std::string>& argv, bool merge_stderr = false,
                                    const std::string& stdin_path = "");
  SpawnedChild(SpawnedChild&& other) noexcept;
  SpawnedChild& operator=(SpawnedChild&&) = delete;
  ~SpawnedChild();

  pid_t pid() const { return pid_; }
  // Reads one line of stdout (without '\n'), waiting at most `timeout`.
  Result<std::string> ReadLine(std::chrono::milliseconds timeout);
  // Reads stdout until EOF (all of it, including what ReadLine buffered).
  Result<std::string> ReadToEnd(std::chrono::milliseconds timeout);
  // Waits for the child to exit, at most `timeout`.
  Result<Exit> Wait(std::chrono::milliseconds timeout);

 private:
  SpawnedChild(pid_t pid, int stdout_fd, std::string name) : pid_(pid), stdout_fd_(stdout_fd), name_(std::move(name)) {}

  pid_t pid_ = -1;  // -1 once reaped
  int stdout_fd_ = -1;
  std::string name_;
  std::string pending_;  // stdout read past the last returned line

  // Appends what stdout has to pending_; false at EOF.
  Result<bool> ReadMore(std::chrono::steady_clock::time_point give_up);
};

}  // namespace nbdk::vmtest
