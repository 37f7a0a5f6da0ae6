#include "csi/mount_table.h"

#include <cerrno>
#include <fstream>
#include <sstream>

namespace nbdk {
namespace {

std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    auto octal = [](char c) { return c >= '0' && c <= '7'; };
    if (s[i] == '\\' && i + 3 < s.size() && octal(s[i + 1]) && octal(s[i + 2]) && octal(s[i + 3])) {
      out.push_back(static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
      continue;
    }
    out.push_back(s[i]);
  }
  return out;
}

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

}  // namespace

bool MountEntry::read_only() const {
  return options == "ro" || options.starts_with("ro,") || options.find(",ro,") != std::string::npos ||
         options.ends_with(",ro");
}

Result<std::vector<MountEntry>> ParseMountInfo(std::string_view text) {
  std::vector<MountEntry> table;
  size_t line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.empty()) continue;
    // id parent major:minor root mount-point options [optional...] - fstype source super-options
    auto f = Fields(line);
    size_t dash = 0;
    for (size_t i = 6; i < f.size(); ++i) {
      if (f[i] == "-") {
        dash = i;
        break;
      }
    }
    if (dash == 0 || dash + 2 >= f.size()) {
      return Status::Corruption("mountinfo line " + std::to_string(line_no) + ": malformed: " + std::string(line));
    }
    MountEntry e;
    e.root = Unescape(f[3]);
    e.mount_point = Unescape(f[4]);
    e.options = std::string(f[5]);
    e.fs_type = std::string(f[dash + 1]);
    e.source = Unescape(f[dash + 2]);
    table.push_back(std::move(e));
  }
  return table;
}

Result<std::vector<MountEntry>> ReadMountTable(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::FromErrno(errno, "read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseMountInfo(ss.str());
}

const MountEntry* FindMount(const std::vector<MountEntry>& table, std::string_view mount_point) {
  const MountEntry* found = nullptr;
  for (const MountEntry& e : table) {
    if (e.mount_point == mount_point) found = &e;
  }
  return found;
}

}  // namespace nbdk
