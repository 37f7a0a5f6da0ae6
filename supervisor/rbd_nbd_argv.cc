#include "supervisor/rbd_nbd_argv.h"

#include <algorithm>
#include <charconv>

namespace nbdk {

namespace {

bool IsIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

Status ValidateSpecPart(std::string_view field, const std::string& value, bool required) {
  if (value.empty()) {
    return required ? Status::InvalidArgument(std::string(field) + ": missing") : Status::Ok();
  }
  if (value.find_first_of("/@ \t\n") != std::string::npos) {
    return Status::InvalidArgument(std::string(field) + " '" + value + "': must not contain '/', '@' or spaces");
  }
  return Status::Ok();
}

// Options nbdkeeper sets itself; a user value would contradict ours.
constexpr std::string_view kControlled[] = {"-f", "-d", "--foreground", "--device", "--cookie",
                                            "--reattach-timeout", "--id", "-i", "--name", "-n",
                                            "--keyfile", "--mon_host", "--mon-host", "-m", "--conf",
                                            "-c"};
// Options that take no value: a bare word after them is a stray argument.
constexpr std::string_view kFlags[] = {"--exclusive", "--read-only", "--try-netlink", "--quiesce",
                                       "--show-cookie"};

// Ceph treats '-' and '_' in option names alike: "--rbd-cache" is "--rbd_cache".
std::string CephOptionName(std::string_view name) {
  std::string out(name);
  for (size_t i = 2; i < out.size(); ++i) {
    if (out[i] == '-') out[i] = '_';
  }
  return out;
}

template <typename Range>
bool Contains(const Range& range, std::string_view s) {
  return std::find(std::begin(range), std::end(range), s) != std::end(range);
}

Status CheckIoTimeout(std::string_view option, std::string_view value) {
  int seconds = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec != std::errc() || ptr != value.data() + value.size() || seconds < 0) {
    return Status::InvalidArgument("map option " + std::string(option) + " '" + std::string(value) +
                                   "': not a number of seconds");
  }
  if (seconds != 0) {
    return Status::InvalidArgument(
        "map option " + std::string(option) + " " + std::string(value) +
        ": a non-zero rbd-nbd IO timeout makes the kernel fail all IO with EIO when Ceph stalls longer "
        "than it; nbdkeeper sets the block queue io_timeout instead");
  }
  return Status::Ok();
}

}  // namespace

Status ValidateVolumeId(std::string_view id) {
  if (id.empty()) return Status::InvalidArgument("volume_id: missing");
  if (id.size() > 128) return Status::InvalidArgument("volume_id: longer than 128 characters");
  if (id.front() == '.') return Status::InvalidArgument("volume_id '" + std::string(id) + "': starts with '.'");
  if (!std::all_of(id.begin(), id.end(), IsIdChar)) {
    return Status::InvalidArgument("volume_id '" + std::string(id) + "': only [A-Za-z0-9._-] allowed");
  }
  return Status::Ok();
}

Status ValidateMapRequest(const MapRequest& r) {
  NBDK_RETURN_IF_ERROR(ValidateVolumeId(r.volume_id));
  NBDK_RETURN_IF_ERROR(ValidateSpecPart("pool", r.image.pool, true));
  NBDK_RETURN_IF_ERROR(ValidateSpecPart("rados_namespace", r.image.rados_namespace, false));
  NBDK_RETURN_IF_ERROR(ValidateSpecPart("image", r.image.image, true));
  if (r.image.user_id.empty()) return Status::InvalidArgument("user_id: missing");
  if (r.image.keyfile.empty()) return Status::InvalidArgument("keyfile: missing");
  for (const auto& m : r.image.monitors) {
    if (m.empty() || m.find_first_of(", \t\n") != std::string::npos) {
      return Status::InvalidArgument("monitor '" + m + "': empty or contains ',' or spaces");
    }
  }
  if (r.cookie.find_first_of(" \t\n") != std::string::npos) {
    return Status::InvalidArgument("cookie '" + r.cookie + "': contains spaces");
  }
  return ValidateMapOptions(r.map_options);
}

Status ValidateMapOptions(const std::vector<std::string>& options) {
  std::string pending;  // an option that may take the next token as value
  for (const auto& token : options) {
    if (token.empty()) return Status::InvalidArgument("map options: empty option");
    if (token[0] != '-') {
      if (pending.empty()) {
        return Status::InvalidArgument("map option '" + token + "': not an option (must start with '-')");
      }
      if (pending == "--io-timeout" || pending == "--timeout") NBDK_RETURN_IF_ERROR(CheckIoTimeout(pending, token));
      pending.clear();
      continue;
    }
    if (!pending.empty() && (pending == "--io-timeout" || pending == "--timeout")) {
      return Status::InvalidArgument("map option " + pending + ": missing value");
    }
    size_t eq = token.find('=');
    std::string name = token.substr(0, eq);
    if (name == "--key") {
      return Status::InvalidArgument("map option --key: secrets never go on a command line; use the keyfile");
    }
    if (Contains(kControlled, name)) {
      return Status::InvalidArgument("map option " + name + ": set by nbdkeeper itself, not a map option");
    }
    if (std::string ceph_name = CephOptionName(name); ceph_name == "--rbd_cache" || ceph_name == "--no_rbd_cache") {
      return Status::InvalidArgument(
          "map option " + name +
          ": nbdkeeper turns librbd's cache off, because writes it acknowledged but had not sent to the OSDs "
          "are lost when rbd-nbd dies and the re-attached process cannot replay them");
    }
    if (eq != std::string::npos) {
      if (name == "--io-timeout" || name == "--timeout") {
        NBDK_RETURN_IF_ERROR(CheckIoTimeout(name, std::string_view(token).substr(eq + 1)));
      }
      pending.clear();
    } else {
      pending = Contains(kFlags, name) ? "" : name;
    }
  }
  if (pending == "--io-timeout" || pending == "--timeout") {
    return Status::InvalidArgument("map option " + pending + ": missing value");
  }
  return Status::Ok();
}

Result<std::vector<std::string>> ParseMapOptions(std::string_view csv) {
  std::vector<std::string> out;
  while (!csv.empty()) {
    size_t comma = csv.find(',');
    std::string_view item = csv.substr(0, comma);
    csv = comma == std::string_view::npos ? std::string_view() : csv.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) continue;
    while (!item.empty() && item.front() == '-') item.remove_prefix(1);
    if (item.empty()) return Status::InvalidArgument("map options: an option is only dashes");
    size_t eq = item.find('=');
    out.push_back("--" + std::string(item.substr(0, eq)));
    if (eq != std::string_view::npos) out.emplace_back(item.substr(eq + 1));
  }
  NBDK_RETURN_IF_ERROR(ValidateMapOptions(out));
  return out;
}

namespace {
void AppendCommonOptions(std::vector<std::string>& argv, const SupervisorConfig& config,
                         const MapRequest& r, const std::string& cookie) {
  argv.insert(argv.end(), {"--try-netlink", "--reattach-timeout", std::to_string(config.reattach_timeout_s),
                           "--cookie", cookie, "--id", r.image.user_id, "--keyfile", r.image.keyfile,
                           "--rbd_cache=false"});
  if (!r.image.monitors.empty()) {
    std::string hosts;
    for (const auto& m : r.image.monitors) hosts += (hosts.empty() ? "" : ",") + m;
    argv.insert(argv.end(), {"--mon_host", hosts});
  }
  if (!r.image.ceph_conf.empty()) argv.insert(argv.end(), {"-c", r.image.ceph_conf});
  if (r.read_only) argv.push_back("--read-only");
  argv.insert(argv.end(), r.map_options.begin(), r.map_options.end());
  argv.push_back(r.image.Path());
}
}  // namespace

std::vector<std::string> RbdNbdMapArgv(const SupervisorConfig& config, const MapRequest& r,
                                       const std::string& cookie) {
  std::vector<std::string> argv = {config.rbd_nbd_path, "map", "-f"};
  AppendCommonOptions(argv, config, r, cookie);
  return argv;
}

std::vector<std::string> RbdNbdAttachArgv(const SupervisorConfig& config, const MapRequest& r,
                                          const std::string& cookie, const std::string& device) {
  std::vector<std::string> argv = {config.rbd_nbd_path, "attach", "-f", "--device", device};
  AppendCommonOptions(argv, config, r, cookie);
  return argv;
}

std::vector<std::string> RbdNbdUnmapArgv(const SupervisorConfig& config, const std::string& device) {
  return {config.rbd_nbd_path, "unmap", device};
}

std::optional<std::string> ParseDeviceLine(std::string_view line) {
  std::string_view device = line.substr(0, line.find(' '));
  if (!NbdDeviceIndex(device).ok()) return std::nullopt;
  return std::string(device);
}

Result<int> NbdDeviceIndex(std::string_view device) {
  constexpr std::string_view kPrefix = "/dev/nbd";
  if (device.substr(0, kPrefix.size()) != kPrefix || device.size() == kPrefix.size() ||
      device.size() > kPrefix.size() + 6) {
    return Status::InvalidArgument("device '" + std::string(device) + "': not /dev/nbdN");
  }
  int index = 0;
  auto digits = device.substr(kPrefix.size());
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) {
    return Status::InvalidArgument("device '" + std::string(device) + "': not /dev/nbdN");
  }
  return index;
}

}  // namespace nbdk
