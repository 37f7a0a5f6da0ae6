#include "supervisor/child_scope.h"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>

#include "base/kernel_file.h"

namespace nbdk {
namespace {

constexpr std::string_view kPrefix = "nbdkeeper-rbd-nbd-";
constexpr std::string_view kSuffix = ".scope";
constexpr size_t kUnitNameMax = 255;  // systemd's UNIT_NAME_MAX - 1
constexpr size_t kHashChars = 16;

// One character as systemd-escape (unit_name_escape) writes it.
std::string EscapeChar(char c) {
  bool keep =
      (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ':' || c == '_' || c == '.';
  if (keep) return std::string(1, c);
  char buf[5];
  std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned char>(c));
  return buf;
}

// FNV-1a, 64 bits: stable across builds and hosts, unlike std::hash.
uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

std::string ScopeUnitName(std::string_view volume_id) {
  const size_t budget = kUnitNameMax - kPrefix.size() - kSuffix.size();
  std::string escaped;
  for (char c : volume_id) escaped += EscapeChar(c);
  if (escaped.size() > budget) {
    // Cut between escaped characters, never inside a "\xNN".
    std::string cut;
    for (char c : volume_id) {
      std::string e = EscapeChar(c);
      if (cut.size() + e.size() > budget - 1 - kHashChars) break;
      cut += e;
    }
    char hash[kHashChars + 1];
    std::snprintf(hash, sizeof(hash), "%016llx", static_cast<unsigned long long>(Fnv1a(volume_id)));
    escaped = cut + "-" + hash;
  }
  return std::string(kPrefix) + escaped + std::string(kSuffix);
}

bool ProcCgroupInUnit(std::string_view proc_cgroup, std::string_view unit) {
  std::string suffix = "/" + std::string(unit);
  while (!proc_cgroup.empty()) {
    size_t eol = proc_cgroup.find('\n');
    std::string_view line = proc_cgroup.substr(0, eol);
    proc_cgroup = eol == std::string_view::npos ? std::string_view() : proc_cgroup.substr(eol + 1);
    // "hierarchy-id:controllers:path"; the path may itself hold ':'.
    size_t first = line.find(':');
    size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view path = line.substr(second + 1);
    if (path.ends_with(suffix)) return true;
  }
  return false;
}

Result<std::string> ReadProcCgroup(int pid) { return ReadKernelFile("/proc/" + std::to_string(pid) + "/cgroup"); }

}  // namespace nbdk
