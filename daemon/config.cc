#include "daemon/config.h"

#include <arpa/inet.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <fstream>
#include <sstream>

#include "daemon/config_settings.h"

namespace nbdk {
namespace {

std::string FlagOf(std::string_view name) {
  std::string f = "--" + std::string(name);
  for (char& ch : f) {
    if (ch == '_') ch = '-';
  }
  return f;
}

std::string FlagName(const Setting& s) { return FlagOf(s.name); }

// The setting a JSON key names, directly or through an alias.
const Setting* FindSetting(std::string_view key) {
  for (const SettingAlias& a : SettingAliases()) {
    if (key == a.name) key = a.setting;
  }
  for (const Setting& s : Settings()) {
    if (key == s.name) return &s;
  }
  return nullptr;
}

const Setting* FindFlag(std::string_view flag) {
  for (const SettingAlias& a : SettingAliases()) {
    if (flag == FlagOf(a.name)) return FindSetting(a.setting);
  }
  for (const Setting& s : Settings()) {
    if (FlagName(s) == flag) return &s;
  }
  return nullptr;
}

Status LoadConfigFile(const std::string& path, Config* config) {
  std::ifstream in(path);
  if (!in) return Status::FromErrno(errno, "config file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ApplyConfigJson(ss.str(), config).WithContext("config file " + path);
}

}  // namespace

Result<std::string> ParseUnixEndpoint(std::string_view endpoint) {
  std::string_view path = endpoint;
  if (path.starts_with("unix://")) {
    path.remove_prefix(7);
  } else if (path.find("://") != std::string_view::npos) {
    return Status::InvalidArgument("'" + std::string(endpoint) + "': only unix:// endpoints are supported");
  }
  if (path.empty() || path.front() != '/') {
    return Status::InvalidArgument("'" + std::string(endpoint) + "': socket path must be absolute");
  }
  if (path.size() >= 108) {  // sizeof(sockaddr_un::sun_path)
    return Status::InvalidArgument("'" + std::string(endpoint) + "': socket path longer than 107 bytes");
  }
  return std::string(path);
}

Result<HostPort> ParseHostPort(std::string_view text) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return Status::InvalidArgument("'" + std::string(text) + "' is not host:port");
  }
  std::string_view host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  auto port = ParseUnsigned(text.substr(colon + 1), 10, 65535);
  if (!port.ok()) return port.status().WithContext("port");
  HostPort hp;
  hp.host = host.empty() ? "0.0.0.0" : std::string(host);
  // The health server binds a numeric address (no resolver on the loop):
  // one that is not is refused here, before the daemon creates anything.
  in6_addr parsed;
  if (inet_pton(AF_INET, hp.host.c_str(), &parsed) != 1 && inet_pton(AF_INET6, hp.host.c_str(), &parsed) != 1) {
    return Status::InvalidArgument("'" + hp.host + "' is not a numeric IPv4 or IPv6 address");
  }
  hp.port = static_cast<uint16_t>(*port);
  return hp;
}

Status ApplyConfigJson(std::string_view json, Config* config) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return Status::InvalidArgument(std::string("invalid JSON at offset ") + std::to_string(doc.GetErrorOffset()) +
                                   ": " + rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsObject()) return Status::InvalidArgument("top level must be a JSON object");
  Config next = *config;  // all or nothing
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
    std::string key(it->name.GetString(), it->name.GetStringLength());
    const Setting* setting = FindSetting(key);
    if (setting == nullptr) return Status::InvalidArgument("field '" + key + "': unknown setting");
    std::string value;
    if (setting->numeric && it->value.IsUint64()) {
      value = std::to_string(it->value.GetUint64());
    } else if (!setting->numeric && it->value.IsString()) {
      value.assign(it->value.GetString(), it->value.GetStringLength());
    } else {
      return Status::InvalidArgument("field '" + key + "': must be " +
                                     (setting->numeric ? "a non-negative integer" : "a string"));
    }
    NBDK_RETURN_IF_ERROR(setting->apply(&next, value).WithContext("field '" + key + "'"));
  }
  *config = std::move(next);
  return Status::Ok();
}

Result<ParsedArgs> ParseArgs(const std::vector<std::string>& args) {
  ParsedArgs out;
  // Pass 1 splits "--flag=value" / "--flag value" and finds --config, so the
  // file applies before every flag whatever their order.
  std::vector<std::pair<std::string, std::string>> flags;
  std::string config_file;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      out.action = Action::kHelp;
      return out;
    }
    if (a == "--version") {
      out.action = Action::kVersion;
      return out;
    }
    if (!a.starts_with("--")) return Status::InvalidArgument("unexpected argument '" + a + "'");
    std::string name = a, value;
    size_t eq = a.find('=');
    if (eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
    }
    if (name != "--config" && FindFlag(name) == nullptr) {
      return Status::InvalidArgument("unknown flag '" + name + "' (see --help)");
    }
    if (eq == std::string::npos) {
      // Every flag takes a value; a flag where one should be means it was left out.
      if (i + 1 >= args.size() || args[i + 1].starts_with("--")) {
        return Status::InvalidArgument(name + ": missing value");
      }
      value = args[++i];
    }
    if (name == "--config") {
      config_file = value;
    } else {
      flags.emplace_back(name, value);
    }
  }
  if (!config_file.empty()) NBDK_RETURN_IF_ERROR(LoadConfigFile(config_file, &out.config));
  for (const auto& [name, value] : flags) {
    NBDK_RETURN_IF_ERROR(FindFlag(name)->apply(&out.config, value).WithContext(name));
  }
  if (out.config.node_id.empty()) {
    char host[256] = {};
    if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') {
      return Status::InvalidArgument("--node-id: not given and the hostname is unavailable");
    }
    out.config.node_id = host;
  }
  NBDK_RETURN_IF_ERROR(ResolveNodeTopology(&out.config));
  return out;
}

std::string UsageText() {
  std::string u =
      "Usage: nbdkeeperd [--config FILE] [flags]\n"
      "Keeps Ceph RBD volumes mapped through rbd-nbd alive; serves CSI over gRPC.\n\n"
      "  --config FILE               JSON object whose keys are the flag names with '_' (e.g. \"state_dir\")\n";
  for (const Setting& s : Settings()) {
    std::string flag = FlagName(s) + (s.numeric ? " N" : " VALUE");
    flag.resize(std::max<size_t>(flag.size() + 1, 28), ' ');
    u += "  " + flag + s.help + "\n";
    for (const SettingAlias& a : SettingAliases()) {
      if (std::string_view(a.setting) != s.name) continue;
      std::string alias = FlagOf(a.name) + " VALUE";
      alias.resize(std::max<size_t>(alias.size() + 1, 28), ' ');
      u += "  " + alias + "the former name of " + FlagName(s) + "\n";
    }
  }
  u += "  --version                   print the version and exit\n"
       "  --help                      print this text and exit\n";
  return u;
}

}  // namespace nbdk
