// The stall watch end to end on the fake rbd-nbd: the device's IO counters
// are files in the fixture's sysfs, the server's admin socket a fake one.
#include <arpa/inet.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "base/unique_fd.h"
#include "supervisor/server_probe.h"
#include "test/supervisor/supervisor_fixture.h"

namespace nbdk {
namespace {

// A stand-in for rbd-nbd's admin socket: answers every question with
// `answer` (length-prefixed, as Ceph does), or never when `silent`.
class FakeAdminSocket {
 public:
  enum class Mode { kAnswer, kSilent, kHangUp };
  FakeAdminSocket(const std::string& path, std::string answer, Mode mode) : answer_(std::move(answer)), mode_(mode) {
    listener_ = UniqueFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    if (::bind(listener_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listener_.get(), 4) != 0) {
      ADD_FAILURE() << "fake admin socket at " << path << ": " << strerror(errno);
      return;
    }
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeAdminSocket() {
    ::shutdown(listener_.get(), SHUT_RDWR);
    if (thread_.joinable()) thread_.join();
  }
  int questions() const { return questions_; }

 private:
  void Serve() {
    std::vector<UniqueFd> held;  // a silent socket keeps its callers waiting
    for (;;) {
      UniqueFd conn(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (conn.get() < 0) return;
      char c;
      while (::read(conn.get(), &c, 1) == 1 && c != '\0') {
      }
      ++questions_;
      if (mode_ == Mode::kHangUp) continue;  // closes without an answer
      if (mode_ == Mode::kSilent) {
        held.push_back(std::move(conn));
        continue;
      }
      uint32_t length = htonl(static_cast<uint32_t>(answer_.size()));
      (void)!::write(conn.get(), &length, sizeof length);
      (void)!::write(conn.get(), answer_.data(), answer_.size());
    }
  }

  UniqueFd listener_;
  std::string answer_;
  Mode mode_;
  std::atomic<int> questions_{0};
  std::thread thread_;
};

class StallTest : public SupervisorTest {
 protected:
  void SetUp() override {
    SupervisorTest::SetUp();
    config_.stall_sample_ms = 20;
    config_.stuck_io_limit_ms = 100;
    std::filesystem::create_directories(AdminSocketDir(config_));
    Behave("img1.map", "device=/dev/nbd1");
    Behave("img1.attach", "");
    MakeSysfs(1);
    Counters(0, 100);
  }
  void Counters(int in_flight, int completed) {
    std::string d = dir_ + "/sys/block/nbd1/";
    std::ofstream(d + "inflight") << "0 " << in_flight << "\n";
    std::ofstream(d + "stat") << completed << " 0 0 0 0 0 0 0 " << in_flight << " 0 0\n";
  }
};

TEST_F(StallTest, AStoppedServerHoldingIoIsKilledAndReattached) {
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  int pid = Snap("vol1").pid;
  Counters(1, 100);
  kill(pid, SIGSTOP);
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", 1); }));
  EXPECT_EQ(sup().counters().stuck_kills, 1u);
  EXPECT_EQ(sup().counters().deaths, 1u);
  EXPECT_NE(Snap("vol1").pid, pid);
  Counters(0, 101);  // the new server completed the held request
  RunFor(100);
  EXPECT_EQ(Snap("vol1").io_stall, "");
  UnmapAllAndShutdown();
}

// A flush is not counted in `inflight`: a server stopped while it holds
// only a flush leaves the counters at rest, and is stuck all the same.
TEST_F(StallTest, AStoppedServerIsKilledWhenNothingIsCountedInFlight) {
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  int pid = Snap("vol1").pid;
  kill(pid, SIGSTOP);
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", 1); }));
  EXPECT_EQ(sup().counters().stuck_kills, 1u);
  EXPECT_NE(Snap("vol1").pid, pid);
  UnmapAllAndShutdown();
}

TEST_F(StallTest, AnIdleServerThatAnswersIsLeftAlone) {
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  int pid = Snap("vol1").pid;
  FakeAdminSocket asok(AdminSocketPath(config_, pid), R"({"ops":[],"linger_ops":[]})", FakeAdminSocket::Mode::kAnswer);
  ASSERT_TRUE(RunUntil([&] { return asok.questions() >= 3; }));
  EXPECT_EQ(Snap("vol1").pid, pid);
  EXPECT_EQ(Snap("vol1").io_stall, "");
  EXPECT_EQ(sup().counters().stuck_kills, 0u);
  UnmapAllAndShutdown();
}

TEST_F(StallTest, OpsInFlightAtTheClusterAreReportedAndNeverKilled) {
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  int pid = Snap("vol1").pid;
  FakeAdminSocket asok(AdminSocketPath(config_, pid), R"({"ops":[{"osd":0,"age":7.5}],"linger_ops":[]})",
                       FakeAdminSocket::Mode::kAnswer);
  Counters(1, 100);
  ASSERT_TRUE(RunUntil([&] { return asok.questions() >= 5; }));
  auto s = Snap("vol1");
  EXPECT_EQ(s.pid, pid);
  EXPECT_EQ(s.state, MappingState::kConnected);
  EXPECT_NE(s.io_stall.find("the cluster holds it: 1 librados op(s) in flight, the oldest 7.5 s, to osd.0"),
            std::string::npos)
      << s.io_stall;
  EXPECT_EQ(sup().counters().stuck_kills, 0u);
  EXPECT_EQ(sup().counters().stalls_held_by_cluster, 1u) << "counted once per stall, not per probe";
  Counters(0, 101);
  ASSERT_TRUE(RunUntil([&] { return Snap("vol1").io_stall.empty(); }));
  UnmapAllAndShutdown();
}

TEST_F(StallTest, AServerWithNoOpTwiceIsStuck) {
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  FakeAdminSocket asok(AdminSocketPath(config_, Snap("vol1").pid), R"({"ops":[],"linger_ops":[]})",
                       FakeAdminSocket::Mode::kAnswer);
  Counters(1, 100);
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", 1); }));
  EXPECT_EQ(asok.questions(), 2);
  EXPECT_EQ(sup().counters().stuck_kills, 1u);
  UnmapAllAndShutdown();
}

TEST_F(StallTest, ASilentAdminSocketIsStuck) {
  config_.stuck_io_limit_ms = 50;
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  FakeAdminSocket asok(AdminSocketPath(config_, Snap("vol1").pid), "", FakeAdminSocket::Mode::kSilent);
  Counters(1, 100);
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", 1); }, 15000));
  EXPECT_EQ(sup().counters().stuck_kills, 1u);
  UnmapAllAndShutdown();
}

TEST_F(StallTest, AnAdminSocketThatHangsUpIsNoProofOfAHang) {
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  int pid = Snap("vol1").pid;
  FakeAdminSocket asok(AdminSocketPath(config_, pid), "", FakeAdminSocket::Mode::kHangUp);
  Counters(1, 100);
  ASSERT_TRUE(RunUntil([&] { return asok.questions() >= 3; }));
  auto s = Snap("vol1");
  EXPECT_EQ(s.pid, pid);
  EXPECT_NE(s.io_stall.find("closed without an answer"), std::string::npos) << s.io_stall;
  EXPECT_EQ(sup().counters().stuck_kills, 0u);
  UnmapAllAndShutdown();
}

TEST_F(StallTest, WithoutAnAdminSocketTheServerIsLeftAloneAndTheStallReported) {
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  int pid = Snap("vol1").pid;
  Counters(1, 100);
  ASSERT_TRUE(RunUntil([&] { return !Snap("vol1").io_stall.empty(); }));
  RunFor(300);
  auto s = Snap("vol1");
  EXPECT_EQ(s.pid, pid);
  EXPECT_NE(s.io_stall.find("no admin socket"), std::string::npos) << s.io_stall;
  EXPECT_EQ(sup().counters().stuck_kills, 0u);
  UnmapAllAndShutdown();
}

TEST_F(StallTest, ALimitOfZeroTurnsTheWatchOff) {
  config_.stuck_io_limit_ms = 0;
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  int pid = Snap("vol1").pid;
  Counters(1, 100);
  kill(pid, SIGSTOP);
  RunFor(400);
  EXPECT_EQ(Snap("vol1").pid, pid);
  EXPECT_EQ(Snap("vol1").io_stall, "");
  kill(pid, SIGCONT);
  UnmapAllAndShutdown();
}

}  // namespace
}  // namespace nbdk
