#include "supervisor/pidfd_watch.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace nbdk {

Result<std::unique_ptr<PidfdWatch>> PidfdWatch::Open(EventLoop& loop, int pid, std::function<void()> on_exit) {
  if (pid <= 0) return Status::InvalidArgument("pid " + std::to_string(pid) + ": not a process id");
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) {
    if (errno == ESRCH) return Status::NotFound("process " + std::to_string(pid) + " does not exist");
    return Status::FromErrno(errno, "pidfd_open " + std::to_string(pid));
  }
  std::unique_ptr<PidfdWatch> w(new PidfdWatch(pid, fd));
  w->on_exit_ = std::move(on_exit);
  w->watch_ = std::make_unique<FdWatch>(loop, fd);
  PidfdWatch* self = w.get();
  // A pidfd becomes readable once the process has exited.
  NBDK_RETURN_IF_ERROR(w->watch_->Start(UV_READABLE, [self](int, int) {
    if (self->exited_) return;
    self->exited_ = true;
    self->watch_->Stop();
    auto cb = self->on_exit_;
    if (cb) cb();  // may destroy *self
  }));
  return w;
}

PidfdWatch::~PidfdWatch() {
  watch_.reset();
  close(fd_);
}

Status PidfdWatch::Kill(int signum) {
  if (exited_) return Status::FailedPrecondition("process " + std::to_string(pid_) + " has already exited");
  if (syscall(SYS_pidfd_send_signal, fd_, signum, nullptr, 0) != 0) {
    return Status::FromErrno(errno, "signal process " + std::to_string(pid_));
  }
  return Status::Ok();
}

}  // namespace nbdk
