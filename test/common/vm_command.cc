#include "test/common/vm_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <thread>
#include <utility>

extern char** environ;

namespace nbdk::vmtest {

std::string JoinArgv(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

std::string Exit::ToString() const {
  return code >= 0 ? "exit " + std::to_string(code) : "killed by signal " + std::to_string(-code);
}

namespace {

Exit FromWaitStatus(int status) {
  if (WIFSIGNALED(status)) return {-WTERMSIG(status)};
  return {WEXITSTATUS(status)};
}

}  // namespace

Result<SpawnedChild> SpawnedChild::Spawn(const std::vector<std::string>& argv, bool merge_stderr,
                                         const std::string& stdin_path) {
  if (argv.empty()) return Status::InvalidArgument("spawn: empty argv");
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return Status::FromErrno(errno, "pipe2");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  if (merge_stderr) posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  if (!stdin_path.empty()) posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, stdin_path.c_str(), O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (rc != 0) {
    close(pipe_fds[0]);
    return Status::FromErrno(rc, "spawn " + JoinArgv(argv));
  }
  return SpawnedChild(pid, pipe_fds[0], JoinArgv(argv));
}

SpawnedChild::SpawnedChild(SpawnedChild&& other) noexcept
    : pid_(other.pid_),
      stdout_fd_(other.stdout_fd_),
      name_(std::move(other.name_)),
      pending_(std::move(other.pending_)) {
  other.pid_ = -1;
  other.stdout_fd_ = -1;
}

SpawnedChild::~SpawnedChild() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

Result<bool> SpawnedChild::ReadMore(std::chrono::steady_clock::time_point give_up) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(give_up - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return Status::DeadlineExceeded(name_ + ": stdout gave nothing more in time (so far: '" + pending_ + "')");
    }
    pollfd pfd{stdout_fd_, POLLIN, 0};
    int rc = poll(&pfd, 1, static_cast<int>(left.count()));
    if (rc < 0 && errno != EINTR) return Status::FromErrno(errno, name_ + ": poll stdout");
    if (rc <= 0) continue;
    char buf[512];
    ssize_t n = read(stdout_fd_, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, name_ + ": read stdout");
    }
    if (n == 0) return false;
    pending_.append(buf, static_cast<size_t>(n));
    return true;
  }
}

Result<std::string> SpawnedChild::ReadLine(std::chrono::milliseconds timeout) {
  const auto give_up = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    size_t nl = pending_.find('\n');
    if (nl != std::string::npos) {
      std::string line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      return line;
    }
    auto more = ReadMore(give_up);
    if (!more.ok()) return more.status();
    if (!*more) {
      return Status::Aborted(name_ + ": stdout closed before a full line (got '" + pending_ + "')");
    }
  }
}

Result<std::string> SpawnedChild::ReadToEnd(std::chrono::milliseconds timeout) {
  const auto give_up = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto more = ReadMore(give_up);
    if (!more.ok()) return more.status();
    if (!*more) return std::exchange(pending_, std::string());
  }
}

Result<Exit> SpawnedChild::Wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return Status::FailedPrecondition(name_ + ": already reaped");
  const auto give_up = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      return FromWaitStatus(status);
    }
    if (r < 0 && errno != EINTR) return Status::FromErrno(errno, name_ + ": waitpid");
    if (std::chrono::steady_clock::now() >= give_up) {
      return Status::DeadlineExceeded(name_ + ": still running after " + std::to_string(timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Result<CommandOutput> RunCommand(const std::vector<std::string>& argv, bool merge_stderr,
                                 const std::string& stdin_path) {
  auto child = SpawnedChild::Spawn(argv, merge_stderr, stdin_path);
  if (!child.ok()) return child.status();
  CommandOutput out;
  auto text = child->ReadToEnd(std::chrono::minutes(5));
  if (!text.ok()) return text.status();
  out.stdout_text = std::move(*text);
  auto exit = child->Wait(std::chrono::minutes(5));
  if (!exit.ok()) return exit.status();
  out.exit = *exit;
  return out;
}

}  // namespace nbdk::vmtest
