#include "journal/node_boot_id.h"

#include <fcntl.h>

#include <cerrno>

#include "base/unique_fd.h"

namespace nbdk {
namespace {

bool IsUuid(const std::string& s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

Result<std::string> ReadBootId(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::FromErrno(errno, "open " + path);
  char buf[64];
  ssize_t n;
  do {
    n = ::read(fd.get(), buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Status::FromErrno(errno, "read " + path);
  std::string id(buf, static_cast<size_t>(n));
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  if (!IsUuid(id)) return Status::Corruption(path + ": not a boot id (a lower-case UUID): \"" + id + "\"");
  return id;
}

}  // namespace nbdk
