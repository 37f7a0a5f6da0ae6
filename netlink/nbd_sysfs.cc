#include "netlink/nbd_sysfs.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <memory>

#include "netlink/nbd_device.h"

namespace nbdk {
namespace {

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

std::string NbdSysfsFile(int index, const std::string& sysfs_root, std::string_view name) {
  return sysfs_root + "/block/" + NbdKernelName(index) + "/" + std::string(name);
}

Result<std::string> ReadNbdBackendCookie(int index, const std::string& sysfs_root) {
  NBDK_RETURN_IF_ERROR(CheckIndex(index));
  const std::string path = NbdSysfsFile(index, sysfs_root, "backend");
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
  const std::string path = NbdSysfsFile(index, sysfs_root, "pid");
  struct stat st;
  if (stat(path.c_str(), &st) == 0) return true;
  if (errno == ENOENT) return false;
  return Status::FromErrno(errno, "stat " + path).WithContext("is nbd" + std::to_string(index) +
                                                               " in use");
}

Result<int> ReadNbdPid(int index, const std::string& sysfs_root) {
  NBDK_RETURN_IF_ERROR(CheckIndex(index));
  const std::string path = NbdSysfsFile(index, sysfs_root, "pid");
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "re"));
  if (!file) return Status::FromErrno(errno, "read " + path);
  char buf[32] = {};
  size_t n = std::fread(buf, 1, sizeof(buf) - 1, file.get());
  std::string text(buf, n);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  bool digits = !text.empty() && text.size() <= 10 &&
                std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  long long pid = digits ? std::stoll(text) : 0;
  if (pid <= 0 || pid > INT32_MAX) return Status::InvalidArgument(path + ": '" + text + "' is not a pid");
  return static_cast<int>(pid);
}

Result<std::vector<std::string>> ReadNbdHolders(int index, const std::string& sysfs_root) {
  NBDK_RETURN_IF_ERROR(CheckIndex(index));
  const std::string path = NbdSysfsFile(index, sysfs_root, "holders");
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(path.c_str()), ::closedir);
  std::vector<std::string> out;
  if (!dir) {
    if (errno == ENOENT) return out;
    return Status::FromErrno(errno, "list " + path);
  }
  while (dirent* e = ::readdir(dir.get())) {
    std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(std::move(name));
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<int>> NbdDevicesWithCookie(const std::string& cookie, const std::string& sysfs_root) {
  std::string block = sysfs_root + "/block";
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(block.c_str()), ::closedir);
  if (!dir) return Status::IoError("list " + block + ": " + Status::FromErrno(errno, "opendir").message());
  std::vector<int> out;
  while (dirent* e = ::readdir(dir.get())) {
    auto index = NbdKernelNameIndex(e->d_name);
    if (!index.ok()) continue;
    auto found = ReadNbdBackendCookie(*index, sysfs_root);
    if (found.ok() && *found == cookie) out.push_back(*index);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace nbdk
