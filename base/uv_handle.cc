#include "base/uv_handle.h"

#include <string>

namespace nbdk {

Timer::Timer(EventLoop& loop) {
  uv_timer_init(loop.uv(), h_.handle());
  h_.MarkInitialized();
}

void Timer::Start(uint64_t timeout_ms, uint64_t repeat_ms, std::function<void()> cb) {
  h_.state().cb = std::move(cb);
  // libuv counts from the loop's cached clock, which stands still while the
  // loop is not running or a callback blocks: refresh it so the timeout
  // runs from now.
  uv_update_time(h_.handle()->loop);
  uv_timer_start(
      h_.handle(),
      [](uv_timer_t* t) {
        auto* box = OwnedHandle<uv_timer_t, State>::BoxOf(t);
        // Copy: the callback may restart or destroy this timer.
        auto cb = box->state.cb;
        cb();
      },
      timeout_ms, repeat_ms);
}

void Timer::Stop() { uv_timer_stop(h_.handle()); }

bool Timer::active() { return uv_is_active(reinterpret_cast<uv_handle_t*>(h_.handle())) != 0; }

FdWatch::FdWatch(EventLoop& loop, int fd) {
  int rc = uv_poll_init(loop.uv(), h_.handle(), fd);
  if (rc == 0) {
    h_.MarkInitialized();
  } else {
    init_ = Status::FromErrno(-rc, "watch fd " + std::to_string(fd));
  }
}

Status FdWatch::Start(int events, Callback cb) {
  if (!init_.ok()) return init_;
  h_.state().cb = std::move(cb);
  int rc = uv_poll_start(h_.handle(), events, [](uv_poll_t* p, int status, int ev) {
    auto* box = OwnedHandle<uv_poll_t, State>::BoxOf(p);
    auto cb = box->state.cb;
    cb(status, ev);
  });
  if (rc != 0) return Status::FromErrno(-rc, "uv_poll_start");
  return Status::Ok();
}

void FdWatch::Stop() {
  if (h_.valid()) uv_poll_stop(h_.handle());
}

SignalWatch::SignalWatch(EventLoop& loop) {
  uv_signal_init(loop.uv(), h_.handle());
  h_.MarkInitialized();
}

Status SignalWatch::Start(int signum, std::function<void(int)> cb) {
  h_.state().cb = std::move(cb);
  int rc = uv_signal_start(
      h_.handle(),
      [](uv_signal_t* s, int signum) {
        auto* box = OwnedHandle<uv_signal_t, State>::BoxOf(s);
        auto cb = box->state.cb;
        cb(signum);
      },
      signum);
  if (rc != 0) return Status::FromErrno(-rc, "uv_signal_start");
  return Status::Ok();
}

void SignalWatch::Stop() { uv_signal_stop(h_.handle()); }

}  // namespace nbdk
