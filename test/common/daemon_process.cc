#include "test/common/daemon_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "test/common/http_client.h"

namespace nbdk::test {

bool SocketAccepts(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

DaemonProcess::DaemonProcess(std::string binary, std::string dir, std::string node_id)
    : binary_(std::move(binary)), dir_(std::move(dir)), node_id_(std::move(node_id)) {}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) Stop(SIGKILL);
}

bool DaemonProcess::Start(const std::vector<std::string>& extra) {
  health_port_ = FreePort();
  std::vector<std::string> args = {binary_, "--csi-endpoint=" + endpoint(), "--state-dir=" + dir_ + "/state",
                                   "--csi-root=" + dir_, "--health-listen=127.0.0.1:" + std::to_string(health_port_),
                                   "--node-id=" + node_id_,
                                   // A test's children never become units of the host's systemd,
                                   // nor its links names in the host's /dev.
                                   "--child-scopes=off", "--device-links=" + dir_ + "/dev-nbdkeeper"};
  args.insert(args.end(), extra.begin(), extra.end());
  return Launch(args);
}

bool DaemonProcess::StartWithConfig(const std::string& config_file, int health_port) {
  health_port_ = health_port;
  return Launch({binary_, "--config", config_file});
}

bool DaemonProcess::Launch(std::vector<std::string> args) {
  // Everything the child needs is built before fork(): the caller may have
  // other threads (gRPC's, a writer's), and after fork() only async-signal-
  // safe calls are allowed, so no allocation.
  std::string log = log_path();
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::dup2(fd, STDERR_FILENO);
    ::dup2(fd, STDOUT_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (SocketAccepts(socket_path()) && HttpGet(health_port_, "/healthz").status == 200) return true;
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = -1;
      start_exit_status_ = st;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

bool DaemonProcess::WaitReady(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (HttpGet(health_port_, "/readyz").status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

int DaemonProcess::Stop(int signum) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, signum);
  return Wait(30000);
}

int DaemonProcess::Wait(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = -1;
      return st;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

std::string DaemonProcess::Log() const {
  std::ifstream in(log_path());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string DaemonProcess::LogTail(size_t lines) const {
  const std::string log = Log();
  size_t start = log.size();
  for (size_t seen = 0; start > 0 && seen < lines;) {
    if (log[--start] == '\n' && start + 1 < log.size()) ++seen;
  }
  return log.substr(start == 0 ? 0 : start + 1);
}

std::string DescribeWaitStatus(int status) {
  if (status == -1) return "still running";
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* name = sigabbrev_np(WTERMSIG(status));
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + (name ? name : "?") + ")";
  }
  return "wait status " + std::to_string(status);
}

}  // namespace nbdk::test
