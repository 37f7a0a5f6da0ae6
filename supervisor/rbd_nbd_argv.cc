#include "supervisor/rbd_nbd_argv.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>

#include "ceph/cephx_credentials.h"
#include "journal/volume_id.h"
#include "netlink/nbd_device.h"
#include "supervisor/rbd_nbd_options.h"
#include "supervisor/server_probe.h"

namespace nbdk {

Status ValidateMapRequest(const MapRequest& r) {
  NBDK_RETURN_IF_ERROR(ValidateVolumeId(r.volume_id));
  NBDK_RETURN_IF_ERROR(CheckCephName("pool", r.image.pool, true));
  NBDK_RETURN_IF_ERROR(CheckCephName("rados_namespace", r.image.rados_namespace, false));
  NBDK_RETURN_IF_ERROR(CheckCephName("image", r.image.image, true));
  NBDK_RETURN_IF_ERROR(CheckCephName("snap", r.image.snap, false));
  NBDK_RETURN_IF_ERROR(CheckCephxUserId("user_id", r.image.user_id));
  // Each is one argv token after its option; a leading '-' would make it one.
  if (r.image.keyfile.empty()) return Status::InvalidArgument("keyfile: missing");
  for (const auto& m : r.image.monitors) {
    if (m.empty() || m.front() == '-' || m.find_first_of(", \t\n") != std::string::npos) {
      return Status::InvalidArgument("monitor '" + m + "': empty, starts with '-' or contains ',' or spaces");
    }
  }
  if (r.cookie.find_first_of(" \t\n") != std::string::npos) {
    return Status::InvalidArgument("cookie '" + r.cookie + "': contains spaces");
  }
  NBDK_RETURN_IF_ERROR(ValidateRbdNbdOptions(r.map_options));
  if (r.image.snap.empty()) return Status::Ok();
  if (!r.read_only) return Status::InvalidArgument("snap '" + r.image.snap + "': a snapshot is mapped read-only");
  return CheckSnapshotMapOptions(r.map_options);
}

namespace {
// --err_to_stderr: rbd-nbd, a Ceph daemon, otherwise keeps its errors (a
// missing image, a wrong key) in a log file nobody reads; on stderr they
// reach the volume's log and the answer to the CSI call.
void AppendCommonOptions(std::vector<std::string>& argv, const SupervisorConfig& config, const MapRequest& r,
                         const std::string& cookie, bool exclusive) {
  argv.insert(argv.end(),
              {"--try-netlink", "--reattach-timeout", std::to_string(config.reattach_timeout_s), "--cookie", cookie,
               "--id", r.image.user_id, "--keyfile", r.image.keyfile, "--rbd_cache=false", "--err_to_stderr=true"});
  std::vector<std::string> asok = AdminSocketArgv(config);
  argv.insert(argv.end(), asok.begin(), asok.end());
  if (!r.image.monitors.empty()) {
    std::string hosts;
    for (const auto& m : r.image.monitors) hosts += (hosts.empty() ? "" : ",") + m;
    argv.insert(argv.end(), {"--mon_host", hosts});
  }
  if (!r.image.ceph_conf.empty()) argv.insert(argv.end(), {"-c", r.image.ceph_conf});
  if (r.read_only) argv.push_back("--read-only");
  if (exclusive && std::find(r.map_options.begin(), r.map_options.end(), "--exclusive") == r.map_options.end()) {
    argv.push_back("--exclusive");
  }
  argv.insert(argv.end(), r.map_options.begin(), r.map_options.end());
  argv.push_back(r.image.Spec());
}
}  // namespace

std::vector<std::string> RbdNbdMapArgv(const SupervisorConfig& config, const MapRequest& r, const std::string& cookie,
                                       bool exclusive) {
  std::vector<std::string> argv = {config.rbd_nbd_path, "map", "-f"};
  AppendCommonOptions(argv, config, r, cookie, exclusive);
  return argv;
}

std::vector<std::string> RbdNbdAttachArgv(const SupervisorConfig& config, const MapRequest& r,
                                          const std::string& cookie, const std::string& device, bool exclusive) {
  std::vector<std::string> argv = {config.rbd_nbd_path, "attach", "-f", "--device", device};
  AppendCommonOptions(argv, config, r, cookie, exclusive);
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

namespace {

Status ArgvError(const std::string& what) { return Status::InvalidArgument("rbd-nbd argv: " + what); }

std::vector<std::string> Split(const std::string& s, char separator) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t end = s.find(separator, start);
    parts.push_back(s.substr(start, end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

// "pool/[namespace/]image[@snap]", as ImageSpec::Spec writes it: no part
// empty, so the image reads back to the same text.
Status ReadImageSpec(const std::string& spec, ImageSpec* image) {
  ImageSpec read;
  if (!SplitImageSpec(spec, &read) || read.pool.empty() || read.image.empty() || read.Spec() != spec) {
    return ArgvError("image '" + spec + "' is not pool/[namespace/]image[@snap]");
  }
  image->pool = read.pool;
  image->rados_namespace = read.rados_namespace;
  image->image = read.image;
  image->snap = read.snap;
  return Status::Ok();
}

// The options the builders write with a value in the next token.
constexpr std::string_view kValued[] = {"--device",       "--cookie",  "--reattach-timeout", "--id",
                                        "--admin-socket", "--keyfile", "--mon_host",         "-c"};

}  // namespace

Result<RbdNbdCommandLine> ParseRbdNbdArgv(const std::vector<std::string>& argv) {
  if (argv.size() < 2) return ArgvError("no command");
  RbdNbdCommandLine line;
  line.program = argv[0];
  line.command = argv[1];
  bool unmap = line.command == "unmap";
  if (!unmap && line.command != "map" && line.command != "attach") {
    return ArgvError("command '" + line.command + "' is not map, attach or unmap");
  }
  MapRequest& r = line.request;
  std::map<std::string, std::string, std::less<>> values;
  std::vector<std::string> positionals;
  bool netlink = false;
  for (size_t i = 2; i < argv.size(); ++i) {
    const std::string& token = argv[i];
    if (std::find(std::begin(kValued), std::end(kValued), token) != std::end(kValued)) {
      if (i + 1 == argv.size()) return ArgvError(token + " without a value");
      if (!values.emplace(token, argv[i + 1]).second) return ArgvError(token + " given twice");
      ++i;
    } else if (token == "-f") {
      line.foreground = true;
    } else if (token == "--read-only") {
      r.read_only = true;
    } else if (token == "--try-netlink" && !netlink) {
      netlink = true;  // the builders' own; a map option may repeat it
    } else if (token == "--rbd_cache=false" || token == "--err_to_stderr=true") {
      continue;  // the builders' own, always written
    } else if (token.starts_with('-')) {
      r.map_options.push_back(token);
    } else {
      positionals.push_back(token);
    }
  }
  auto value = [&](std::string_view option) {
    auto it = values.find(option);
    return it == values.end() ? std::string() : it->second;
  };
  line.device = value("--device");
  r.cookie = value("--cookie");
  r.image.user_id = value("--id");
  r.image.keyfile = value("--keyfile");
  r.image.ceph_conf = value("-c");
  if (values.contains("--mon_host")) r.image.monitors = Split(value("--mon_host"), ',');
  if (values.contains("--reattach-timeout")) {
    std::string seconds = value("--reattach-timeout");
    const char* end = seconds.data() + seconds.size();
    auto [stop, error] = std::from_chars(seconds.data(), end, line.reattach_timeout_s);
    if (seconds.empty() || error != std::errc() || stop != end) {
      return ArgvError("--reattach-timeout '" + seconds + "' is not a number of seconds");
    }
  }
  std::string what = unmap ? "device" : "image";
  if (positionals.empty()) return ArgvError(line.command + " names no " + what);
  if (positionals.size() > 1) {
    return ArgvError(line.command + " names more than one " + what + ": '" + positionals[0] + "' and '" +
                     positionals[1] + "'");
  }
  if (unmap) {
    line.device = positionals[0];
    return line;
  }
  NBDK_RETURN_IF_ERROR(ReadImageSpec(positionals[0], &r.image));
  return line;
}

}  // namespace nbdk
