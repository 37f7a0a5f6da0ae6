#include "base/durable_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/unique_fd.h"

namespace nbdk {
namespace {

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Writes `data` to a fresh `tmp` and syncs it.
Status WriteSynced(const std::string& tmp, std::string_view data, mode_t mode) {
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) return Status::FromErrno(errno, "remove stale " + tmp);
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd.valid()) return Status::FromErrno(errno, "create " + tmp);
  NBDK_RETURN_IF_ERROR(WriteAll(fd.get(), data, tmp));
  // No EINTR retry: a retried fsync after a failure may falsely succeed.
  if (::fsync(fd.get()) != 0) return Status::FromErrno(errno, "fsync " + tmp);
  // close(2) may carry the error of a buffered write.
  if (::close(fd.Release()) != 0) return Status::FromErrno(errno, "close " + tmp);
  return Status::Ok();
}

}  // namespace

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "write " + path);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status FsyncDirectory(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return Status::FromErrno(errno, "open directory " + dir);
  if (::fsync(fd.get()) != 0) return Status::FromErrno(errno, "fsync directory " + dir);
  return Status::Ok();
}

Status ReplaceFileDurably(const std::string& path, std::string_view data, mode_t mode) {
  std::string tmp = path + ".tmp";
  Status written = WriteSynced(tmp, data, mode);
  if (written.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    written = Status::FromErrno(errno, "rename " + tmp + " to " + path);
  }
  if (!written.ok()) {
    ::unlink(tmp.c_str());
    return written;
  }
  return FsyncDirectory(DirOf(path));
}

Status MakeDirectoryDurably(const std::string& dir, mode_t mode) {
  if (::mkdir(dir.c_str(), mode) != 0) {
    if (errno == EEXIST) return Status::Ok();
    return Status::FromErrno(errno, "mkdir " + dir);
  }
  return FsyncDirectory(DirOf(dir));
}

Status RemoveFileDurably(const std::string& path) {
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return Status::FromErrno(errno, "remove " + path);
  }
  return FsyncDirectory(DirOf(path));
}

}  // namespace nbdk
