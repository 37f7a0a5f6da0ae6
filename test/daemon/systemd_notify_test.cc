// nbdkeeperd speaks sd_notify as systemd expects of a Type=notify unit with
// WatchdogSec: READY=1 once serving, STATUS=, WATCHDOG=1 pings from the
// loop, STOPPING=1 on SIGTERM. The test plays systemd's side of the
// notification socket.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "test/common/http_client.h"

namespace nbdk {
namespace {

class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
    bound_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    timeval tv{0, 100000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~NotifySocket() { ::close(fd_); }
  bool bound() const { return bound_; }
  // Collects messages until `until` returns true or the timeout passes.
  template <typename Pred>
  bool ReadUntil(std::vector<std::string>* got, Pred until, std::chrono::seconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      char buf[4096];
      ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n > 0) got->emplace_back(buf, static_cast<size_t>(n));
      if (until(*got)) return true;
    }
    return false;
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool bound_ = false;
};

int Count(const std::vector<std::string>& msgs, const std::string& needle) {
  int n = 0;
  for (const auto& m : msgs) {
    if (m.find(needle) != std::string::npos) ++n;
  }
  return n;
}

TEST(SystemdNotifyTest, ReadyStatusWatchdogAndStopping) {
  char tmpl[] = "/tmp/nbdk-notify-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  NotifySocket notify(dir + "/notify.sock");
  ASSERT_TRUE(notify.bound());
  int port = test::FreePort();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("NOTIFY_SOCKET", (dir + "/notify.sock").c_str(), 1);
    ::setenv("WATCHDOG_USEC", "400000", 1);  // pings every 200 ms
    ::setenv("WATCHDOG_PID", std::to_string(::getpid()).c_str(), 1);
    std::string endpoint = "--csi-endpoint=" + dir + "/csi.sock";
    std::string state = "--state-dir=" + dir + "/state";
    std::string health = "--health-listen=127.0.0.1:" + std::to_string(port);
    ::execl(NBDKEEPERD_PATH, NBDKEEPERD_PATH, endpoint.c_str(), state.c_str(), health.c_str(), nullptr);
    ::_exit(127);
  }
  std::vector<std::string> msgs;
  bool ready = notify.ReadUntil(
      &msgs, [](const auto& m) { return Count(m, "READY=1") == 1 && Count(m, "WATCHDOG=1") >= 3; },
      std::chrono::seconds(20));
  EXPECT_TRUE(ready) << "messages so far: " << msgs.size();
  EXPECT_GE(Count(msgs, "STATUS=serving CSI on " + dir + "/csi.sock"), 1);
  ::kill(pid, SIGTERM);
  EXPECT_TRUE(notify.ReadUntil(
      &msgs, [](const auto& m) { return Count(m, "STOPPING=1") == 1; }, std::chrono::seconds(20)));
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nbdk
