#include "base/kernel_file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "base/unique_fd.h"

namespace nbdk {

Result<std::string> ReadKernelFile(const std::string& path, size_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return Status::FromErrno(errno == ESRCH ? ENOENT : errno, "open " + path);
  std::string out;
  char buf[4096];
  while (out.size() < max_bytes) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    // ESRCH: the process exited between the open and the read.
    if (n < 0) return Status::FromErrno(errno == ESRCH ? ENOENT : errno, "read " + path);
    if (n == 0) break;
    out.append(buf, std::min(static_cast<size_t>(n), max_bytes - out.size()));
  }
  return out;
}

}  // namespace nbdk
