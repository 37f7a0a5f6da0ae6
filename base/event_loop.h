// EventLoop: the one libuv loop thread that owns all of nbdkeeper's mutable
// state.
//
// Threading contract (the pattern every RPC and every worker follows):
//  - Domain objects (the supervisor and its mappings, the staged volumes,
//    the Node operations, the healer, netlink) are touched only on the
//    loop thread; their entry points check it with NBDK_CHECK_LOOP_THREAD,
//    in every build (a release build included), as do RunBlocking and
//    RunDetached. The node journal itself runs on the pool, under its own
//    mutex.
//  - The only door in from another thread (a gRPC handler, a librbd
//    callback) is Post(fn): a mutex-guarded queue plus uv_async_send. Sends
//    coalesce, so each wake-up drains the whole queue, in FIFO order.
//  - Blocking work (librados/librbd, file I/O, fsync) runs through
//    RunBlocking(): `work` on a pool thread, then `done` on the loop.
//    `work` must not touch loop-owned state. Its Lane picks the threads:
//    libuv's pool (4) for the Node and everything else; threads of its own
//    for the Controller service, whose calls to a cluster that does not
//    answer hold a thread ~40 s each: stage, publish, unpublish and
//    unstage never wait behind them. Work that may block for as long as
//    the kernel pleases runs through RunDetached().
//  - No other thread is started outside these doors, but the daemon's
//    stopper (daemon/daemon.cc), which waits out gRPC's shutdown and then
//    Posts like any other thread.
#pragma once

#include <uv.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "base/status.h"
#include "base/worker_pool.h"

namespace nbdk {

// Where RunBlocking work runs (see the contract above).
enum class Lane {
  kShared,      // libuv's thread pool
  kController,  // the loop's kControllerThreads threads
};
// A few Controller calls at once; each mostly waits on its cluster.
inline constexpr size_t kControllerThreads = 4;

class EventLoop {
 public:
  EventLoop();
  // Closes the loop; handles still open at this point are a bug (logged).
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  uv_loop_t* uv() { return loop_.get(); }

  // Any thread. Runs `fn` on the loop thread, after everything posted
  // earlier. Returns false, and destroys `fn` on the calling thread, once
  // Shutdown() has begun.
  bool Post(std::function<void()> fn);

  // Loop thread only. `work` runs on a thread of `lane`; `done` then runs
  // on the loop thread, also during shutdown.
  void RunBlocking(std::function<void()> work, std::function<void()> done, Lane lane = Lane::kShared);

  // Loop thread only. For blocking work that may not return for a long
  // time - a read of an nbd device waiting for an attach returns when the
  // attach comes or the kernel's window ends - which on the pool could take
  // every pool thread from RunBlocking work (an attach needs some). `work`
  // runs on a thread of its own; `done` then runs on the loop. A `work`
  // that finishes after Shutdown() (or the loop's end) is left to finish:
  // its `done` is destroyed on that thread without running, so by then it
  // must own no loop-thread object.
  void RunDetached(std::function<void()> work, std::function<void()> done);

  bool IsLoopThread() const { return std::this_thread::get_id() == loop_thread_; }
  // Aborts the process, naming `where`, when not called on the loop thread:
  // a broken threading contract corrupts state silently otherwise.
  void CheckLoopThread(const char* where) const {
    if (!IsLoopThread()) LoopThreadViolation(where);
  }

  // Runs the loop on the calling thread (which becomes the loop thread) until
  // Stop() is called or nothing is left to run.
  void Run();
  // Loop thread only. Makes Run() return after the current iteration.
  void Stop() { uv_stop(loop_.get()); }

  // Loop thread only. Stops accepting Posts, closes the wake-up handle and
  // runs the loop until every handle has closed. Returns an error naming how
  // many handles are still open if any are left (a leak).
  Status Shutdown();

  // Monotonic milliseconds, cached per loop iteration (uv_now).
  uint64_t NowMs() const { return uv_now(loop_.get()); }

 private:
  // Closures for the loop and their wake-up: Post()'s, shared with
  // RunDetached's threads, which may outlive the loop; and the Controller
  // lane's `done`s.
  struct Inbox {
    std::mutex mu;
    std::deque<std::function<void()>> queue;  // guarded by mu
    bool accepting = true;                    // guarded by mu
    uv_async_t* wake = nullptr;               // sent to while accepting
    bool Post(std::function<void()> fn);
  };

  [[noreturn]] static void LoopThreadViolation(const char* where);
  static void OnAsync(uv_async_t* handle);
  static void OnControllerDone(uv_async_t* handle);
  void Drain();
  void CloseControllerLane();

  struct LoopDeleter {
    void operator()(uv_loop_t* l) const;
  };
  std::unique_ptr<uv_loop_t, LoopDeleter> loop_;
  std::unique_ptr<uv_async_t> async_;
  std::thread::id loop_thread_;
  std::shared_ptr<Inbox> inbox_ = std::make_shared<Inbox>();
  bool shut_down_ = false;  // loop thread
  // The Controller lane's `done`s come back through a queue and wake-up of
  // their own, which Shutdown() leaves open until the last has run.
  std::unique_ptr<uv_async_t> controller_async_;
  std::shared_ptr<Inbox> controller_done_ = std::make_shared<Inbox>();
  size_t controller_in_flight_ = 0;                 // loop thread
  bool controller_open_ = true;                     // loop thread
  WorkerPool controller_pool_{kControllerThreads};  // last: its threads are joined first
};

#define NBDK_CHECK_LOOP_THREAD(loop) (loop).CheckLoopThread(__PRETTY_FUNCTION__)

// Loop thread only. RunBlocking for work that yields a Status.
void RunBlockingStatus(EventLoop& loop, std::function<Status()> work, std::function<void(Status)> done,
                       Lane lane = Lane::kShared);

// Loop thread only. RunBlocking for work that yields a Result<T>.
template <typename T>
void RunBlockingResult(EventLoop& loop, std::function<Result<T>()> work, std::function<void(Result<T>)> done,
                       Lane lane = Lane::kShared) {
  auto result = std::make_shared<Result<T>>(Status::Internal("blocking work did not run"));
  loop.RunBlocking([result, work = std::move(work)] { *result = work(); },
                   [result, done = std::move(done)] { done(std::move(*result)); }, lane);
}

}  // namespace nbdk
