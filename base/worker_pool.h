// WorkerPool: at most `max_threads` threads that run closures from one FIFO
// queue; a thread starts when work is waiting and no thread is idle. It is
// the threads of EventLoop's Controller lane (base/event_loop.h says
// what runs there and how results reach the loop). Its mutex guards the
// queue alone: the closures carry whatever they touch.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace nbdk {

class WorkerPool {
 public:
  explicit WorkerPool(size_t max_threads);
  // Lets the queued and running closures finish, then joins every thread.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Any thread. Runs `fn` on a pool thread once the closures submitted
  // before it have started.
  void Submit(std::function<void()> fn);

 private:
  void Serve();

  const size_t max_threads_;
  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  size_t idle_ = 0;                          // threads waiting for work; guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::vector<std::thread> threads_;         // guarded by mu_
};

}  // namespace nbdk
