#include "supervisor/rbd_nbd_argv.h"

#include "journal/volume_id.h"
#include "netlink/nbd_device.h"
#include "supervisor/map_options.h"

namespace nbdk {

Status ValidateMapRequest(const MapRequest& r) {
  NBDK_RETURN_IF_ERROR(ValidateVolumeId(r.volume_id));
  NBDK_RETURN_IF_ERROR(CheckCephName("pool", r.image.pool, true));
  NBDK_RETURN_IF_ERROR(CheckCephName("rados_namespace", r.image.rados_namespace, false));
  NBDK_RETURN_IF_ERROR(CheckCephName("image", r.image.image, true));
  // Each is one argv token after its option; a leading '-' would make it one.
  if (r.image.user_id.empty() || r.image.user_id.front() == '-' ||
      r.image.user_id.find_first_of(" \t\n") != std::string::npos) {
    return Status::InvalidArgument("user_id '" + r.image.user_id + "': empty, starts with '-' or contains spaces");
  }
  if (r.image.keyfile.empty()) return Status::InvalidArgument("keyfile: missing");
  for (const auto& m : r.image.monitors) {
    if (m.empty() || m.front() == '-' || m.find_first_of(", \t\n") != std::string::npos) {
      return Status::InvalidArgument("monitor '" + m + "': empty, starts with '-' or contains ',' or spaces");
    }
  }
  if (r.cookie.find_first_of(" \t\n") != std::string::npos) {
    return Status::InvalidArgument("cookie '" + r.cookie + "': contains spaces");
  }
  return ValidateMapOptions(r.map_options);
}

namespace {
// --err_to_stderr: rbd-nbd, a Ceph daemon, otherwise keeps its errors (a
// missing image, a wrong key) in a log file nobody reads; on stderr they
// reach the volume's log and the answer to the CSI call.
void AppendCommonOptions(std::vector<std::string>& argv, const SupervisorConfig& config,
                         const MapRequest& r, const std::string& cookie) {
  argv.insert(argv.end(), {"--try-netlink", "--reattach-timeout", std::to_string(config.reattach_timeout_s),
                           "--cookie", cookie, "--id", r.image.user_id, "--keyfile", r.image.keyfile,
                           "--rbd_cache=false", "--err_to_stderr=true"});
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


}  // namespace nbdk
