#include "base/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

namespace nbdk {
namespace {

const char* KindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  return "of an unknown type";
}

}  // namespace

Result<UniqueFd> OpenRegularFile(const std::string& path, int flags, mode_t mode) {
  UniqueFd fd(::open(path.c_str(), flags | O_NONBLOCK | O_CLOEXEC, mode));
  if (!fd.valid()) {
    // O_NOFOLLOW reports a symlink as ELOOP.
    if (errno == ELOOP && (flags & O_NOFOLLOW)) return Status::Corruption(path + ": is a symlink, not followed");
    return Status::FromErrno(errno, "open " + path);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
  if (!S_ISREG(st.st_mode)) {
    return Status::Corruption(path + ": is " + KindOf(st.st_mode) + ", not a regular file");
  }
  int status_flags = ::fcntl(fd.get(), F_GETFL);
  if (status_flags < 0 || ::fcntl(fd.get(), F_SETFL, status_flags & ~O_NONBLOCK) != 0) {
    return Status::FromErrno(errno, "fcntl " + path);
  }
  return fd;
}

}  // namespace nbdk
