#include "netlink/nbd_sysfs.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>

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

// A sysfs attribute: at most one page.
Result<std::string> ReadPage(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "re"));
  if (!file) return Status::FromErrno(errno, "read " + path);
  char buf[4096];
  size_t n = std::fread(buf, 1, sizeof(buf), file.get());
  if (std::ferror(file.get())) return Status::IoError("read " + path + ": read error");
  return std::string(buf, n);
}

}  // namespace

std::string NbdSysfsFile(int index, const std::string& sysfs_root, std::string_view name) {
  return sysfs_root + "/block/" + NbdKernelName(index) + "/" + std::string(name);
}

Result<std::string> ReadNbdBackendCookie(int index, const std::string& sysfs_root) {
  NBDK_RETURN_IF_ERROR(CheckIndex(index));
  const std::string path = NbdSysfsFile(index, sysfs_root, "backend");
  // A cookie is a short identifier (rbd-nbd: a UUID).
  auto cookie = ReadPage(path);
  if (!cookie.ok()) return cookie.status();
  while (!cookie->empty() && (cookie->back() == '\n' || cookie->back() == '\0')) cookie->pop_back();
  if (cookie->empty()) return Status::NotFound(path + " is empty: no backend identifier");
  return cookie;
}

Status CheckNbdBackendCookie(const std::string& device, const std::string& cookie, const std::string& sysfs_root) {
  Result<int> index = NbdDeviceIndex(device);
  if (!index.ok()) return index.status();
  Result<std::string> found = ReadNbdBackendCookie(*index, sysfs_root);
  if (found.ok() && *found == cookie) return Status::Ok();
  if (found.ok()) {
    return Status::FailedPrecondition(device + " carries cookie " + *found + ", not " + cookie +
                                      ": another volume's map has it now");
  }
  if (found.status().code() == Code::kNotFound) {
    return Status::FailedPrecondition(device + " carries no cookie (disconnected), not " + cookie);
  }
  return found.status();
}

Result<bool> NbdPidFileExists(int index, const std::string& sysfs_root) {
  NBDK_RETURN_IF_ERROR(CheckIndex(index));
  const std::string path = NbdSysfsFile(index, sysfs_root, "pid");
  struct stat st;
  if (stat(path.c_str(), &st) == 0) return true;
  if (errno == ENOENT) return false;
  return Status::FromErrno(errno, "stat " + path).WithContext("is nbd" + std::to_string(index) + " in use");
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

namespace {

// Whitespace-separated unsigned decimal fields; nullopt on anything else.
std::optional<std::vector<uint64_t>> Fields(std::string_view text) {
  std::vector<uint64_t> out;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ' || text[i] == '\n' || text[i] == '\t') {
      ++i;
      continue;
    }
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data() + i, text.data() + text.size(), value);
    if (ec != std::errc() || (end != text.data() + text.size() && *end != ' ' && *end != '\n' && *end != '\t')) {
      return std::nullopt;
    }
    out.push_back(value);
    i = end - text.data();
  }
  return out;
}

}  // namespace

Result<NbdIoCounters> ParseNbdIoCounters(std::string_view inflight, std::string_view stat) {
  auto in = Fields(inflight);
  if (!in || in->size() != 2) {
    return Status::InvalidArgument("inflight: expected \"<reads> <writes>\", got \"" + std::string(inflight) + "\"");
  }
  auto st = Fields(stat);
  if (!st || (st->size() != 11 && st->size() != 15 && st->size() != 17)) {
    return Status::InvalidArgument("stat: expected 11, 15 or 17 counters, got \"" + std::string(stat) + "\"");
  }
  NbdIoCounters c;
  c.in_flight = (*in)[0] + (*in)[1];
  // reads, writes completed; discards (field 12) and flushes (field 16).
  c.completed = (*st)[0] + (*st)[4] + (st->size() > 11 ? (*st)[11] : 0) + (st->size() > 15 ? (*st)[15] : 0);
  return c;
}

Result<NbdIoCounters> ReadNbdIoCounters(int index, const std::string& sysfs_root) {
  NBDK_RETURN_IF_ERROR(CheckIndex(index));
  auto inflight = ReadPage(NbdSysfsFile(index, sysfs_root, "inflight"));
  if (!inflight.ok()) return inflight.status();
  auto stat = ReadPage(NbdSysfsFile(index, sysfs_root, "stat"));
  if (!stat.ok()) return stat.status();
  auto counters = ParseNbdIoCounters(*inflight, *stat);
  if (!counters.ok()) return counters.status().WithContext(NbdKernelName(index));
  return counters;
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
