#include "csi/key_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/quote_field.h"

namespace nbdk {

std::string KeyFilePath(const std::string& dir, const std::string& volume_id) {
  return dir + "/" + volume_id + ".key";
}

Result<std::string> WriteKeyFile(const std::string& dir, const std::string& volume_id, const std::string& key) {
  // Callers pass validated IDs; this keeps the file inside `dir` regardless.
  if (volume_id.empty() || volume_id == "." || volume_id == ".." || volume_id.size() > 200 ||
      volume_id.find('/') != std::string::npos) {
    return Status::InvalidArgument("key file name for volume " + QuoteField(volume_id) + " is not a single file name");
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return Status::FromErrno(errno, "create key dir " + dir);
  std::string path = KeyFilePath(dir, volume_id);
  std::string tmp = path + ".tmp";
  ::unlink(tmp.c_str());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Status::FromErrno(errno, "create key file " + tmp);
  std::string body = key + "\n";
  size_t off = 0;
  int err = 0;
  while (off < body.size()) {
    ssize_t n = ::write(fd, body.data() + off, body.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    off += static_cast<size_t>(n);
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  ::close(fd);
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    return Status::FromErrno(err, "write key file " + path);
  }
  return path;
}

Status RemoveKeyFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Status::FromErrno(errno, "remove key file " + path);
  return Status::Ok();
}

}  // namespace nbdk
