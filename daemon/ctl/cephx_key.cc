#include "daemon/ctl/cephx_key.h"

#include <cctype>
#include <fstream>
#include <sstream>

#include "ceph/cephx_credentials.h"

namespace nbdk::ctl {
namespace {

std::string Trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

}  // namespace

Result<std::string> CephxKeyFrom(const std::string& text, const std::string& user_id) {
  // A bare key (a --keyfile), else the user's section of a keyring.
  if (auto bare = ParseCephxKey("key", text); bare.ok()) return bare;
  std::istringstream lines(text);
  std::string section, wanted = "[client." + user_id + "]";
  for (std::string line; std::getline(lines, line);) {
    line = Trim(line);
    if (line.starts_with("[")) {
      section = line;
      continue;
    }
    size_t eq = line.find('=');
    if (section != wanted || eq == std::string::npos || Trim(line.substr(0, eq)) != "key") continue;
    auto key = ParseCephxKey("key", line.substr(eq + 1));
    if (key.ok()) return key;
    return Status::InvalidArgument("the key of client." + user_id + " is not base64");
  }
  return Status::NotFound("no key for client." + user_id + " (neither a bare key nor a keyring section " + wanted + ")");
}

Result<std::string> ReadCephxKey(const std::string& keyfile, const std::string& user_id) {
  std::string path = keyfile.empty() ? "/etc/ceph/ceph.client." + user_id + ".keyring" : keyfile;
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read the key file " + path + " (give one with --keyfile)");
  std::stringstream text;
  text << in.rdbuf();
  auto key = CephxKeyFrom(text.str(), user_id);
  if (!key.ok()) return key.status().WithContext(path);
  return key;
}

}  // namespace nbdk::ctl
