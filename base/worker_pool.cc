#include "base/worker_pool.h"

namespace nbdk {

WorkerPool::WorkerPool(size_t max_threads) : max_threads_(max_threads) {}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::Submit(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.push_back(std::move(fn));
  // Threads start only as the work needs them: most loops never use them.
  if (queue_.size() > idle_ && threads_.size() < max_threads_) {
    threads_.emplace_back([this] { Serve(); });
  } else {
    ready_.notify_one();
  }
}

void WorkerPool::Serve() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    ++idle_;
    ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    --idle_;
    if (queue_.empty()) return;  // stopping, and nothing is left
    std::function<void()> fn = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    fn();
    fn = nullptr;  // its captures go unlocked: a destructor may Submit
    lock.lock();
  }
}

}  // namespace nbdk
