// RAII ownership of libuv handles: one heap-allocated handle per wrapper.
//
// libuv may touch a handle until its close callback runs, so a wrapper never
// frees its handle directly: destruction calls uv_close() and the static
// close callback frees the memory (libuv docs/src/design.rst). Destroying a
// wrapper from inside its own callback is therefore safe.
//
// All wrappers are loop thread only.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "base/event_loop.h"
#include "base/status.h"

namespace nbdk {

// Owns one uv handle of type H together with caller state S (typically the
// callbacks). handle()->data points at the Box. Use Init() right after
// constructing with the matching uv_*_init result.
template <typename H, typename S>
class OwnedHandle {
 public:
  struct Box {
    H handle{};
    S state{};
  };

  OwnedHandle() : box_(std::make_unique<Box>()) { box_->handle.data = box_.get(); }
  ~OwnedHandle() { Close(); }
  OwnedHandle(const OwnedHandle&) = delete;
  OwnedHandle& operator=(const OwnedHandle&) = delete;

  // Records whether uv_*_init succeeded; only an initialised handle is closed.
  void MarkInitialized() { initialized_ = true; }

  // Closes the handle (idempotent). The memory is freed by libuv's close
  // callback; callbacks never run after Close().
  void Close() {
    if (!box_) return;
    if (!initialized_) {
      box_.reset();
      return;
    }
    Box* box = box_.release();
    uv_close(reinterpret_cast<uv_handle_t*>(&box->handle),
             [](uv_handle_t* h) { std::unique_ptr<Box> owned(static_cast<Box*>(h->data)); });
  }

  bool valid() const { return box_ != nullptr && initialized_; }
  H* handle() { return &box_->handle; }
  S& state() { return box_->state; }

  static Box* BoxOf(H* handle) { return static_cast<Box*>(handle->data); }

 private:
  std::unique_ptr<Box> box_;
  bool initialized_ = false;
};

// A one-shot or repeating timer.
class Timer {
 public:
  explicit Timer(EventLoop& loop);
  // Replaces any pending start. repeat_ms == 0 means one-shot.
  void Start(uint64_t timeout_ms, uint64_t repeat_ms, std::function<void()> cb);
  void Stop();
  bool active();

 private:
  struct State {
    std::function<void()> cb;
  };
  OwnedHandle<uv_timer_t, State> h_;
};

// Watches a file descriptor it does not own (uv_poll_t). The fd must outlive
// this object; destroy (or Stop) the watch before closing the fd.
class FdWatch {
 public:
  // `cb(status, events)`: status < 0 is a libuv error for the fd.
  using Callback = std::function<void(int status, int events)>;
  FdWatch(EventLoop& loop, int fd);
  Status Start(int events, Callback cb);
  void Stop();

 private:
  struct State {
    Callback cb;
  };
  OwnedHandle<uv_poll_t, State> h_;
  Status init_;
};

// Delivers a signal on the loop thread.
class SignalWatch {
 public:
  explicit SignalWatch(EventLoop& loop);
  Status Start(int signum, std::function<void(int signum)> cb);
  void Stop();

 private:
  struct State {
    std::function<void(int)> cb;
  };
  OwnedHandle<uv_signal_t, State> h_;
};

}  // namespace nbdk
