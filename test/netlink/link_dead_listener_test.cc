#include "netlink/link_dead_listener.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "base/uv_handle.h"
#include "test/netlink/genl_test_messages.h"
#include "test/netlink/run_loop.h"

namespace nbdk {
namespace {

using testing::kNbdFamily;

// A datagram socketpair standing in for the kernel's multicast socket.
class SocketPair {
 public:
  SocketPair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds_), 0); }
  ~SocketPair() {
    close(fds_[0]);
    close(fds_[1]);
  }
  int reader() const { return fds_[0]; }
  void Send(const std::vector<uint8_t>& bytes) {
    ASSERT_EQ(send(fds_[1], bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  }

 private:
  int fds_[2] = {-1, -1};
};

std::vector<uint8_t> Concat(std::vector<uint8_t> a, const std::vector<uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(LinkDeadListenerTest, DeliversEachLinkDeadAndSkipsEverythingElse) {
  EventLoop loop;
  SocketPair pair;
  std::vector<int> seen;
  {
    LinkDeadListener listener(loop, pair.reader(), kNbdFamily, [&](int index) {
      EXPECT_TRUE(loop.IsLoopThread());
      seen.push_back(index);
      if (seen.size() == 3) loop.Stop();
    });
    ASSERT_TRUE(listener.Start().ok());
    pair.Send({1, 2, 3});                             // garbage
    pair.Send(testing::StatusReply({{0, 1}}));        // another command
    pair.Send(testing::LinkDead(9, kNbdFamily + 1));  // another family
    pair.Send(testing::LinkDead(4));
    pair.Send(Concat(testing::LinkDead(5), testing::LinkDead(6)));  // two in one datagram
    Timer safety(loop);
    safety.Start(5000, 0, [&] {
      ADD_FAILURE() << "LINK_DEAD callbacks did not arrive";
      loop.Stop();
    });
    loop.Run();
  }
  EXPECT_EQ(seen, (std::vector<int>{4, 5, 6}));
  EXPECT_TRUE(loop.Shutdown().ok());  // the poll watch and timer were closed
}

// The VM test's pattern: blocking work (rbd-nbd map, STATUS) for longer than
// the wait limit while the loop is idle, then a LINK_DEAD that arrives a
// little after the loop starts. RunLoop must still wait its full limit.
TEST(LinkDeadListenerTest, RunLoopWaitsForALateEventAfterTheLoopSatIdle) {
  using std::chrono::milliseconds;
  EventLoop loop;
  SocketPair pair;
  std::vector<int> seen;
  {
    LinkDeadListener listener(loop, pair.reader(), kNbdFamily, [&](int index) {
      seen.push_back(index);
      loop.Stop();
    });
    ASSERT_TRUE(listener.Start().ok());
    std::this_thread::sleep_for(milliseconds(1000));  // the loop's clock goes stale
    std::thread kernel([&] {
      std::this_thread::sleep_for(milliseconds(100));
      pair.Send(testing::LinkDead(7));
    });
    const auto start = std::chrono::steady_clock::now();
    testing::RunLoop(loop, milliseconds(800));
    const auto waited = std::chrono::steady_clock::now() - start;
    kernel.join();
    EXPECT_EQ(seen, (std::vector<int>{7}))
        << "RunLoop returned after " << std::chrono::duration_cast<milliseconds>(waited).count() << " ms";
  }
  EXPECT_TRUE(loop.Shutdown().ok());
}

TEST(LinkDeadListenerTest, CallbackMayDestroyTheListener) {
  EventLoop loop;
  SocketPair pair;
  std::vector<int> seen;
  std::unique_ptr<LinkDeadListener> listener;
  listener = std::make_unique<LinkDeadListener>(loop, pair.reader(), kNbdFamily, [&](int index) {
    seen.push_back(index);
    listener.reset();
    loop.Stop();
  });
  ASSERT_TRUE(listener->Start().ok());
  pair.Send(Concat(testing::LinkDead(1), testing::LinkDead(2)));
  pair.Send(testing::LinkDead(3));
  Timer safety(loop);
  safety.Start(5000, 0, [&] {
    ADD_FAILURE() << "no LINK_DEAD callback";
    loop.Stop();
  });
  loop.Run();
  safety.Stop();
  EXPECT_EQ(seen, (std::vector<int>{1}));
  EXPECT_EQ(listener, nullptr);
}

TEST(LinkDeadListenerTest, HandleDatagramReportsDestruction) {
  EventLoop loop;
  SocketPair pair;
  int calls = 0;
  auto listener = std::make_unique<LinkDeadListener>(loop, pair.reader(), kNbdFamily, [&](int) { ++calls; });
  EXPECT_TRUE(listener->HandleDatagram(testing::LinkDead(2)));
  EXPECT_TRUE(listener->HandleDatagram(std::vector<uint8_t>(7, 0xff)));
  EXPECT_EQ(calls, 1);
  listener.reset();
  EXPECT_TRUE(loop.Shutdown().ok());
}

}  // namespace
}  // namespace nbdk
