#include "daemon/base/event_loop.h"

#include <cstdio>
#include <cstdlib>

#include "daemon/base/log.h"

namespace nbdk {

void EventLoop::LoopDeleter::operator()(uv_loop_t* l) const {
  int rc = uv_loop_close(l);
  if (rc != 0) {
    NBDK_LOG_ERROR("uv_loop_close_failed", {{"error", uv_strerror(rc)}});
  }
  std::default_delete<uv_loop_t>()(l);
}

void EventLoop::LoopThreadViolation(const char* where) {
  std::fprintf(stderr, "nbdkeeper: %s called off the loop thread; aborting\n", where);
  std::abort();
}

EventLoop::EventLoop() : async_(std::make_unique<uv_async_t>()), loop_thread_(std::this_thread::get_id()) {
  auto loop = std::make_unique<uv_loop_t>();
  uv_loop_init(loop.get());
  loop_.reset(loop.release());
  uv_async_init(loop_.get(), async_.get(), &EventLoop::OnAsync);
  async_->data = this;
  inbox_->wake = async_.get();
}

EventLoop::~EventLoop() {
  if (!shut_down_) {
    Status s = Shutdown();
    if (!s.ok()) NBDK_LOG_ERROR("event_loop_leak", {{"error", s.message()}});
  }
}

bool EventLoop::Post(std::function<void()> fn) { return inbox_->Post(std::move(fn)); }

bool EventLoop::Inbox::Post(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mu);
  if (!accepting) return false;
  queue.push_back(std::move(fn));
  // Sending under the lock keeps Shutdown() from closing the handle between
  // our push and the send.
  uv_async_send(wake);
  return true;
}

void EventLoop::RunDetached(std::function<void()> work, std::function<void()> done) {
  NBDK_CHECK_LOOP_THREAD(*this);
  std::thread([inbox = inbox_, work = std::move(work), done = std::move(done)]() mutable {
    work();
    inbox->Post(std::move(done));
  }).detach();
}

void EventLoop::OnAsync(uv_async_t* handle) { static_cast<EventLoop*>(handle->data)->Drain(); }

void EventLoop::Drain() {
  std::deque<std::function<void()>> batch;
  {
    std::lock_guard<std::mutex> lock(inbox_->mu);
    batch.swap(inbox_->queue);
  }
  for (auto& fn : batch) fn();
}

namespace {
struct BlockingJob {
  uv_work_t req;
  std::function<void()> work;
  std::function<void()> done;
};
}  // namespace

void EventLoop::RunBlocking(std::function<void()> work, std::function<void()> done) {
  NBDK_CHECK_LOOP_THREAD(*this);
  auto job = std::make_unique<BlockingJob>();
  job->work = std::move(work);
  job->done = std::move(done);
  job->req.data = job.get();
  int rc = uv_queue_work(
      loop_.get(), &job->req, [](uv_work_t* r) { static_cast<BlockingJob*>(r->data)->work(); },
      [](uv_work_t* r, int) {
        std::unique_ptr<BlockingJob> owned(static_cast<BlockingJob*>(r->data));
        owned->done();
      });
  if (rc == 0) {
    job.release();  // owned by libuv until the after-work callback
  } else {
    job->work();
    job->done();
  }
}

void RunBlockingStatus(EventLoop& loop, std::function<Status()> work, std::function<void(Status)> done) {
  auto status = std::make_shared<Status>();
  loop.RunBlocking([status, work = std::move(work)] { *status = work(); },
                   [status, done = std::move(done)] { done(*status); });
}

void EventLoop::Run() {
  loop_thread_ = std::this_thread::get_id();
  uv_run(loop_.get(), UV_RUN_DEFAULT);
}

Status EventLoop::Shutdown() {
  if (shut_down_) return Status::Ok();
  shut_down_ = true;
  {
    std::lock_guard<std::mutex> lock(inbox_->mu);
    inbox_->accepting = false;
  }
  Drain();
  uv_close(reinterpret_cast<uv_handle_t*>(async_.get()), nullptr);
  // An open handle would keep uv_run from ever returning: report it instead.
  int open = 0;
  uv_walk(
      loop_.get(), [](uv_handle_t* h, void* arg) {
        if (!uv_is_closing(h)) ++*static_cast<int*>(arg);
      },
      &open);
  if (open > 0) {
    return Status::Internal(std::to_string(open) + " libuv handle(s) still open at shutdown");
  }
  uv_run(loop_.get(), UV_RUN_DEFAULT);
  return Status::Ok();
}

}  // namespace nbdk
