// ReturnsDespiteFifo: whether a call that meets a FIFO planted at `fifo`
// returns by itself. A call that blocks opening it (a reader waits for a
// writer, a writer for a reader) is released by opening the FIFO's other
// end, so the test fails instead of hanging.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>

namespace nbdk::test {

template <typename Call>
bool ReturnsDespiteFifo(const std::string& fifo, Call call, int wait_ms = 3000) {
  auto done = std::async(std::launch::async, call);
  if (done.wait_for(std::chrono::milliseconds(wait_ms)) == std::future_status::ready) return true;
  // O_RDWR opens a FIFO without waiting and serves as both ends.
  int fd = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  done.wait_for(std::chrono::milliseconds(200));
  if (fd >= 0) ::close(fd);
  done.wait();
  return false;
}

}  // namespace nbdk::test
