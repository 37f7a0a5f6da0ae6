#include "base/event_loop.h"

#include <cstdio>
#include <cstdlib>

#include "base/log.h"

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

EventLoop::EventLoop()
    : async_(std::make_unique<uv_async_t>()),
      loop_thread_(std::this_thread::get_id()),
      controller_async_(std::make_unique<uv_async_t>()) {
  auto loop = std::make_unique<uv_loop_t>();
  uv_loop_init(loop.get());
  loop_.reset(loop.release());
  uv_async_init(loop_.get(), async_.get(), &EventLoop::OnAsync);
  async_->data = this;
  inbox_->wake = async_.get();
  uv_async_init(loop_.get(), controller_async_.get(), &EventLoop::OnControllerDone);
  controller_async_->data = this;
  controller_done_->wake = controller_async_.get();
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

void EventLoop::RunBlocking(std::function<void()> work, std::function<void()> done, Lane lane) {
  NBDK_CHECK_LOOP_THREAD(*this);
  // After Shutdown() has closed the Controller lane (its last `done` ran),
  // libuv's pool takes its work: only shutdown's own is left.
  if (lane == Lane::kController && controller_open_) {
    ++controller_in_flight_;
    controller_pool_.Submit([inbox = controller_done_, work = std::move(work), done = std::move(done)]() mutable {
      work();
      // Both closures are destroyed on the loop, as libuv's pool does.
      inbox->Post([work = std::move(work), done = std::move(done)] { done(); });
    });
    return;
  }
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

void EventLoop::OnControllerDone(uv_async_t* handle) {
  auto* self = static_cast<EventLoop*>(handle->data);
  std::deque<std::function<void()>> batch;
  {
    std::lock_guard<std::mutex> lock(self->controller_done_->mu);
    batch.swap(self->controller_done_->queue);
  }
  for (auto& fn : batch) {
    fn();
    --self->controller_in_flight_;
  }
  if (self->shut_down_ && self->controller_in_flight_ == 0) self->CloseControllerLane();
}

void EventLoop::CloseControllerLane() {
  if (!controller_open_) return;
  controller_open_ = false;
  {
    std::lock_guard<std::mutex> lock(controller_done_->mu);
    controller_done_->accepting = false;
  }
  uv_close(reinterpret_cast<uv_handle_t*>(controller_async_.get()), nullptr);
}

void RunBlockingStatus(EventLoop& loop, std::function<Status()> work, std::function<void(Status)> done, Lane lane) {
  auto status = std::make_shared<Status>();
  loop.RunBlocking([status, work = std::move(work)] { *status = work(); },
                   [status, done = std::move(done)] { done(*status); }, lane);
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
  // The Controller lane's work in flight still gets its `done`: its wake-up
  // closes after the last one (OnControllerDone).
  if (controller_in_flight_ == 0) CloseControllerLane();
  // An open handle would keep uv_run from ever returning: report it instead.
  struct Walk {
    int open = 0;
    uv_handle_t* lane = nullptr;
  } walk{0, reinterpret_cast<uv_handle_t*>(controller_async_.get())};
  uv_walk(
      loop_.get(),
      [](uv_handle_t* h, void* arg) {
        auto* w = static_cast<Walk*>(arg);
        if (!uv_is_closing(h) && h != w->lane) ++w->open;
      },
      &walk);
  const int open = walk.open;
  if (open > 0) {
    return Status::Internal(std::to_string(open) + " libuv handle(s) still open at shutdown");
  }
  uv_run(loop_.get(), UV_RUN_DEFAULT);
  return Status::Ok();
}

}  // namespace nbdk
