// rbd_nbd_argv: request validation and the exact rbd-nbd 16.2 command lines.
//
// Map and attach of one volume share every option (same cookie, user,
// keyfile, monitors, conf, user options), so an attach re-creates the
// connection the map made. librbd's cache is always off: with it, a write
// is acknowledged before the OSDs have it, and a flush sent after a
// re-attach reaches a new process whose cache never held that write, so a
// killed rbd-nbd would lose data the application was told is written. The cephx key never appears in argv: rbd-nbd
// reads it from --keyfile.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/base/status.h"
#include "netlink/nbd_device.h"
#include "supervisor/supervisor_config.h"

namespace nbdk {

// Checks everything a map needs (the volume ID by journal/volume_id.h), the map options against their allow-list
// (supervisor/map_options.h); the error names the offending field.
Status ValidateMapRequest(const MapRequest& request);

// `rbd-nbd map -f ...`: the foreground child that becomes the server.
std::vector<std::string> RbdNbdMapArgv(const SupervisorConfig& config, const MapRequest& request,
                                       const std::string& cookie);
// `rbd-nbd attach -f --device <device> ...` with the map's options.
std::vector<std::string> RbdNbdAttachArgv(const SupervisorConfig& config, const MapRequest& request,
                                          const std::string& cookie, const std::string& device);
// `rbd-nbd unmap <device>`.
std::vector<std::string> RbdNbdUnmapArgv(const SupervisorConfig& config, const std::string& device);

// The device rbd-nbd prints when the connection is up: "/dev/nbdN",
// optionally followed by " <cookie>" (--show-cookie). nullopt otherwise.
std::optional<std::string> ParseDeviceLine(std::string_view line);

}  // namespace nbdk
