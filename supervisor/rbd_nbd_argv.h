// rbd_nbd_argv: request validation and the exact rbd-nbd 16.2 command lines,
// written (for a spawn) and read back (for a server found after a restart).
//
// Map and attach of one volume share every option (same cookie, user,
// keyfile, monitors, conf, user options), so an attach re-creates the
// connection the map made. librbd's cache is always off: with it, a write
// is acknowledged before the OSDs have it, and a flush sent after a
// re-attach reaches a new process whose cache never held that write, so a
// killed rbd-nbd would lose data the application was told is written. The cephx key never appears in argv: rbd-nbd
// reads it from --keyfile.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "netlink/nbd_device.h"
#include "supervisor/supervisor_config.h"

namespace nbdk {

// Checks everything a map needs (the volume ID by journal/volume_id.h), the map options against their allow-list
// (supervisor/rbd_nbd_options.h); a snapshot is mapped read-only and
// without --exclusive (CheckSnapshotMapOptions). The error names the
// offending field.
Status ValidateMapRequest(const MapRequest& request);

// `rbd-nbd map -f ...`: the foreground child that becomes the server.
// `exclusive`: with --exclusive (once, whatever the map options say), so
// that it holds the image's lock before its device is up and librbd
// refuses the lock to every other client (supervisor/image_fence.h).
std::vector<std::string> RbdNbdMapArgv(const SupervisorConfig& config, const MapRequest& request,
                                       const std::string& cookie, bool exclusive);
// `rbd-nbd attach -f --device <device> ...` with the map's options.
std::vector<std::string> RbdNbdAttachArgv(const SupervisorConfig& config, const MapRequest& request,
                                          const std::string& cookie, const std::string& device, bool exclusive);
// `rbd-nbd unmap <device>`.
std::vector<std::string> RbdNbdUnmapArgv(const SupervisorConfig& config, const std::string& device);

// The device rbd-nbd prints when the connection is up: "/dev/nbdN",
// optionally followed by " <cookie>" (--show-cookie). nullopt otherwise.
std::optional<std::string> ParseDeviceLine(std::string_view line);

// An rbd-nbd command line read back (/proc/<pid>/cmdline of a server found
// after a restart): the inverse of the three builders above for every field
// they write.
struct RbdNbdCommandLine {
  std::string program;              // argv[0]: SupervisorConfig::rbd_nbd_path
  std::string command;              // "map", "attach" or "unmap"
  bool foreground = false;          // -f
  uint32_t reattach_timeout_s = 0;  // --reattach-timeout; 0 when absent
  std::string device;               // attach: --device; unmap: its argument
  // The image (pool/[namespace/]image[@snap], --id, --keyfile, --mon_host, -c),
  // --read-only, the map options and --cookie; volume_id is not in argv
  // and stays empty.
  MapRequest request;
};

// Reads `argv` as the builders write it: --device, --cookie,
// --reattach-timeout, --id, --keyfile, --mon_host and -c take the next
// token; -f and --read-only are flags; --try-netlink, --rbd_cache=false
// and --err_to_stderr=true are the builders' own (only the first
// --try-netlink: a map option may repeat it); every other token starting
// with '-' is a map option; the one token that does not is the image (the
// device for unmap). The allow-list is not applied: this reads, it does not
// validate. InvalidArgument naming what is wrong: no command, a command
// other than map, attach or unmap, an option without its value or given
// twice, a --reattach-timeout that is not a number of seconds, no image or
// two, an image that is not pool/[namespace/]image[@snap].
Result<RbdNbdCommandLine> ParseRbdNbdArgv(const std::vector<std::string>& argv);

}  // namespace nbdk
