// PidfdWatch: notices the exit of a process that is not our child (an
// rbd-nbd left running by a previous daemon instance) through a pidfd
// (pidfd_open(2), Linux >= 5.3) polled by the loop.
//
// The exit status of such a process is unknowable (its parent reaps it).
// Signals go through pidfd_send_signal(2), so a recycled pid is never hit.
//
// Loop thread only.
#pragma once

#include <functional>
#include <memory>

#include "base/event_loop.h"
#include "base/status.h"
#include "base/uv_handle.h"

namespace nbdk {

class PidfdWatch {
 public:
  // NotFound if `pid` does not exist. `on_exit` runs once on the loop when
  // the process has exited (also for an exited, not yet reaped one); it may
  // destroy this object.
  static Result<std::unique_ptr<PidfdWatch>> Open(EventLoop& loop, int pid, std::function<void()> on_exit);
  // Stops watching and closes the pidfd; never signals the process.
  ~PidfdWatch();
  PidfdWatch(const PidfdWatch&) = delete;
  PidfdWatch& operator=(const PidfdWatch&) = delete;

  int pid() const { return pid_; }
  bool exited() const { return exited_; }
  Status Kill(int signum);

 private:
  PidfdWatch(int pid, int fd) : pid_(pid), fd_(fd) {}

  int pid_;
  int fd_;
  bool exited_ = false;
  std::function<void()> on_exit_;
  // Declared last: destroyed (the poll handle closed) before fd_ is closed.
  std::unique_ptr<FdWatch> watch_;
};

}  // namespace nbdk
