// The mappings of an image this host has outside nbdkeeper: krbd devices
// (/sys/bus/rbd/devices/<id>/{pool,pool_ns,name,current_snap}) and rbd-nbd
// processes nbdkeeperd does not supervise (`rbd device map -t nbd`, a
// hand-run rbd-nbd). `map` refuses an image mapped so: two clients writing
// one image corrupt it, and the lock breaker takes every other holder of
// the image's lock on this host for a dead rbd-nbd of its own.
#pragma once

#include <string>
#include <vector>

#include "daemon/ctl/ctl_args.h"
#include "netlink/nbd_sysfs.h"

namespace nbdk::ctl {

struct ForeignMapping {
  std::string device;  // "/dev/rbd0", "/dev/nbd3"; "" when no device names the process
  std::string by;      // "krbd", "rbd-nbd pid 1234"
};

struct HostRoots {
  std::string sysfs = kSysfsRoot;
  std::string proc = "/proc";
};

// Every mapping of `spec` (its pool, namespace, image and snapshot exactly)
// through krbd, or through an rbd-nbd whose pid is not in `supervised`.
// BLOCKING (sysfs and /proc reads); unreadable entries are skipped.
std::vector<ForeignMapping> ForeignMappings(const MapSpec& spec, const std::vector<int>& supervised,
                                            const HostRoots& roots);

// "rbd/db is already mapped on this host through krbd as /dev/rbd0 (unmap it
// first: rbd device unmap /dev/rbd0)".
std::string RefusalFor(const MapSpec& spec, const std::vector<ForeignMapping>& found);

}  // namespace nbdk::ctl
