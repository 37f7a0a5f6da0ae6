#include "netlink/nbd_sysfs.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <memory>

namespace nbdk {
namespace {

std::string DeviceFile(int index, const std::string& sysfs_root, const char* name) {
  return sysfs_root + "/block/nbd" + std::to_string(index) + "/" + name;
}

Status CheckIndex(int index) {
  if (index < 0) {
    return Status::InvalidArgument("nbd device index " + std::to_string(index) + " is negative");
  }
  return Status::Ok();
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

Result<std::string> ReadNbdBackendCookie(int index, const std::string& sysfs_root) {
  NBDK_RETURN_IF_ERROR(CheckIndex(index));
  const std::string path = DeviceFile(index, sysfs_root, "backend");
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "re"));
  if (!file) return Status::FromErrno(errno, "read " + path);
  // A cookie is a short identifier (rbd-nbd: a UUID); sysfs serves one page.
  char buf[4096];
  size_t n = std::fread(buf, 1, sizeof(buf), file.get());
  if (std::ferror(file.get())) return Status::IoError("read " + path + ": read error");
  std::string cookie(buf, n);
  while (!cookie.empty() && (cookie.back() == '\n' || cookie.back() == '\0')) cookie.pop_back();
  if (cookie.empty()) return Status::NotFound(path + " is empty: no backend identifier");
  return cookie;
}

Result<bool> NbdPidFileExists(int index, const std::string& sysfs_root) {
  NBDK_RETURN_IF_ERROR(CheckIndex(index));
  const std::string path = DeviceFile(index, sysfs_root, "pid");
  struct stat st;
  if (stat(path.c_str(), &st) == 0) return true;
  if (errno == ENOENT) return false;
  return Status::FromErrno(errno, "stat " + path).WithContext("is nbd" + std::to_string(index) +
                                                               " in use");
}

}  // namespace nbdk
