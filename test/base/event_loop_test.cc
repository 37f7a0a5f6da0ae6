#include "base/event_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "base/uv_handle.h"

namespace nbdk {
namespace {

TEST(EventLoopTest, PostFromManyThreadsRunsEverythingInOrderPerThread) {
  EventLoop loop;
  constexpr int kThreads = 4, kPerThread = 1000;
  std::vector<std::vector<int>> seen(kThreads);
  int total = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        loop.Post([&, t, i] {
          EXPECT_TRUE(loop.IsLoopThread());
          seen[t].push_back(i);
          if (++total == kThreads * kPerThread) loop.Stop();
        });
      }
    });
  }
  loop.Run();
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(seen[t].size(), static_cast<size_t>(kPerThread));
    for (int i = 0; i < kPerThread; ++i) ASSERT_EQ(seen[t][i], i);
  }
  EXPECT_TRUE(loop.Shutdown().ok());
}

// `door` (RunBlocking on either lane, or RunDetached) runs the work on
// another thread, then its done on the loop.
using Door = std::function<void(EventLoop&, std::function<void()>, std::function<void()>)>;
void ExpectWorkOffLoopThenDoneOnLoop(const Door& door) {
  EventLoop loop;
  std::thread::id work_thread;
  bool done_on_loop = false;
  door(
      loop, [&] { work_thread = std::this_thread::get_id(); },
      [&] {
        done_on_loop = loop.IsLoopThread();
        loop.Stop();
      });
  loop.Run();
  EXPECT_NE(work_thread, std::this_thread::get_id());
  EXPECT_TRUE(done_on_loop);
  EXPECT_TRUE(loop.Shutdown().ok());
}

TEST(EventLoopTest, RunBlockingRunsWorkOffLoopThenDoneOnLoop) {
  ExpectWorkOffLoopThenDoneOnLoop([](EventLoop& l, auto work, auto done) { l.RunBlocking(work, done); });
}

TEST(EventLoopTest, RunBlockingOnTheControllerLaneRunsWorkOffLoopThenDoneOnLoop) {
  ExpectWorkOffLoopThenDoneOnLoop(
      [](EventLoop& l, auto work, auto done) { l.RunBlocking(work, done, Lane::kController); });
}

TEST(EventLoopTest, RunDetachedRunsWorkOnAThreadOfItsOwnThenDoneOnLoop) {
  ExpectWorkOffLoopThenDoneOnLoop([](EventLoop& l, auto work, auto done) { l.RunDetached(work, done); });
}

// Work still blocked when the loop ends is left to finish; its `done` is
// then destroyed on the work's thread without running.
TEST(EventLoopTest, RunDetachedWorkThatOutlivesTheLoopDropsItsDone) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto token = std::make_shared<int>(0);
  std::weak_ptr<int> watch = token;
  {
    EventLoop loop;
    loop.RunDetached([released] { released.wait(); }, [token] { ADD_FAILURE() << "done ran after the loop ended"; });
    token.reset();
    EXPECT_TRUE(loop.Shutdown().ok());
  }
  release.set_value();
  for (int i = 0; i < 200 && !watch.expired(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(watch.expired());
}

TEST(EventLoopTest, TimerCanDestroyItselfFromItsCallback) {
  EventLoop loop;
  auto timer = std::make_unique<Timer>(loop);
  int fired = 0;
  timer->Start(1, 0, [&] {
    ++fired;
    timer.reset();
    loop.Stop();
  });
  loop.Run();
  EXPECT_EQ(fired, 1);
  EXPECT_TRUE(loop.Shutdown().ok());
}

TEST(EventLoopTest, TimerCountsFromStartEvenAfterTheLoopSatIdle) {
  EventLoop loop;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the cached clock goes stale
  Timer timer(loop);
  auto started = std::chrono::steady_clock::now();
  timer.Start(200, 0, [&] { loop.Stop(); });
  loop.Run();
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(190));
  timer.Stop();
}

TEST(EventLoopTest, ShutdownReportsLeakedHandle) {
  auto loop = std::make_unique<EventLoop>();
  Timer timer(*loop);
  timer.Start(100000, 0, [] {});
  Status s = loop->Shutdown();
  EXPECT_EQ(s.code(), Code::kInternal);
  timer.Stop();
}

TEST(EventLoopTest, PostAfterShutdownIsDropped) {
  EventLoop loop;
  ASSERT_TRUE(loop.Shutdown().ok());
  bool ran = false;
  loop.Post([&] { ran = true; });
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace nbdk

namespace nbdk {
namespace {

// The threading contract holds in every build: NDEBUG does not turn it off.
TEST(EventLoopDeathTest, LoopOnlyCallsFromAnotherThreadAbort) {
  EventLoop loop;
  EXPECT_DEATH(
      {
        std::thread other([&loop] { NBDK_CHECK_LOOP_THREAD(loop); });
        other.join();
      },
      "off the loop thread");
  NBDK_CHECK_LOOP_THREAD(loop);  // the creating thread is the loop thread until Run()
  EXPECT_TRUE(loop.Shutdown().ok());
}

}  // namespace
}  // namespace nbdk
