// The Controller lane of RunBlocking (base/event_loop.h): bounded
// threads of its own, so that work waiting on it never delays libuv's pool,
// and `done`s that still run during Shutdown().
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "base/event_loop.h"

namespace nbdk {
namespace {

using namespace std::chrono_literals;

TEST(ControllerLaneTest, AFullLaneNeverDelaysSharedWork) {
  EventLoop loop;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> running{0}, most{0};
  constexpr int kBlocked = 3 * kControllerThreads;
  int lane_done = 0;
  for (int i = 0; i < kBlocked; ++i) {
    loop.RunBlocking(
        [&, released] {
          int now = ++running;
          int seen = most.load();
          while (now > seen && !most.compare_exchange_weak(seen, now)) {
          }
          released.wait();  // a call to a cluster that does not answer
          --running;
        },
        [&] {
          if (++lane_done == kBlocked) loop.Stop();
        },
        Lane::kController);
  }
  bool shared_ran_while_blocked = false;
  loop.RunBlocking([] {},
                   [&] {
                     shared_ran_while_blocked = lane_done == 0;
                     // Every lane thread is busy by now or soon; none beyond the bound.
                     for (int i = 0; i < 500 && running.load() < int(kControllerThreads); ++i)
                       std::this_thread::sleep_for(10ms);
                     release.set_value();
                   });
  loop.Run();
  EXPECT_TRUE(shared_ran_while_blocked);
  EXPECT_EQ(lane_done, kBlocked);
  EXPECT_EQ(most.load(), int(kControllerThreads));
  EXPECT_TRUE(loop.Shutdown().ok());
}

TEST(ControllerLaneTest, ShutdownRunsTheDoneOfWorkInFlightAndOfWorkItQueues) {
  EventLoop loop;
  std::vector<int> done;
  loop.RunBlocking([] { std::this_thread::sleep_for(100ms); },
                   [&] {
                     done.push_back(1);
                     loop.RunBlocking([] {}, [&] { done.push_back(2); }, Lane::kController);
                   },
                   Lane::kController);
  EXPECT_TRUE(loop.Shutdown().ok());
  EXPECT_EQ(done, (std::vector<int>{1, 2}));
}

}  // namespace
}  // namespace nbdk
