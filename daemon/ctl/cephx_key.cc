#include "daemon/ctl/cephx_key.h"

#include <unistd.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <vector>

#include "ceph/ceph_conf.h"
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
  return Status::NotFound("no key for client." + user_id + " (neither a bare key nor a keyring section " + wanted +
                          ")");
}

namespace {

Result<std::string> KeyInFile(const std::string& path, const std::string& user_id, const std::string& hint) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read the key file " + path + hint);
  std::stringstream text;
  text << in.rdbuf();
  auto key = CephxKeyFrom(text.str(), user_id);
  if (!key.ok()) return key.status().WithContext(path);
  return key;
}

// Ceph's list separators in a keyring setting.
std::vector<std::string> SplitPaths(const std::string& list) {
  std::vector<std::string> out;
  std::istringstream in(list);
  for (std::string p; std::getline(in, p, ',');) {
    std::istringstream words(p);
    for (std::string w; words >> w;) {
      for (size_t semi; (semi = w.find(';')) != std::string::npos; w.erase(0, semi + 1)) {
        if (semi > 0) out.push_back(w.substr(0, semi));
      }
      if (!w.empty()) out.push_back(w);
    }
  }
  return out;
}

}  // namespace

Result<std::string> ReadCephxKey(const std::string& keyfile, const std::string& user_id, const ChosenCluster& cluster) {
  if (!keyfile.empty()) return KeyInFile(keyfile, user_id, " (--keyfile)");
  CephConf conf;
  if (!cluster.ceph_conf.empty()) {
    auto loaded = LoadCephConf(cluster.ceph_conf);
    if (!loaded.ok()) return loaded.status();
    conf = std::move(loaded).value();
  }
  const std::string where = cluster.ceph_conf + ": client." + user_id + "'s ";
  if (std::string key = conf.Get("key", user_id); !key.empty()) {
    auto parsed = ParseCephxKey("key", key);
    if (!parsed.ok()) return parsed.status().WithContext(cluster.ceph_conf);
    return parsed;
  }
  if (std::string file = conf.Get("keyfile", user_id); !file.empty()) {
    auto path = ExpandCephMeta(file, cluster.name, user_id);
    if (!path.ok()) return path.status().WithContext(where + "keyfile");
    return KeyInFile(*path, user_id, " (" + where + "keyfile)");
  }
  std::string setting = conf.Get("keyring", user_id);
  std::vector<std::string> keyrings = setting.empty() ? DefaultKeyrings(cluster.name, user_id) : SplitPaths(setting);
  std::string tried;
  for (const std::string& raw : keyrings) {
    auto path = ExpandCephMeta(raw, cluster.name, user_id);
    if (!path.ok()) return path.status().WithContext(where + "keyring");
    // As librados: the first keyring that exists is the one read.
    if (::access(path->c_str(), F_OK) == 0) return KeyInFile(*path, user_id, "");
    tried += (tried.empty() ? "" : ", ") + *path;
  }
  return Status::NotFound("no keyring for client." + user_id + " (looked for " + tried +
                          (setting.empty() ? "" : ", the keyring setting of " + cluster.ceph_conf) +
                          "; give one with --keyfile)");
}

}  // namespace nbdk::ctl
