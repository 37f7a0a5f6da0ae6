// ChildScopes: gives each rbd-nbd child a cgroup of its own, outside the
// daemon's, so that stopping or killing the daemon's container or unit
// leaves the device served (issue 15). The daemon adopts such children
// after its restart like any other running server.
//
// The scope is named after the volume (ScopeUnitName), so that an adopted
// child's mode can be read back from /proc/<pid>/cgroup alone.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace nbdk {

class ChildScopes {
 public:
  virtual ~ChildScopes() = default;
  // Loop thread only; never blocks the loop. Moves `pid`, an rbd-nbd
  // serving (or attaching) `volume_id`, into the volume's scope. `done`
  // runs once, later, on the loop thread, with the unit name once the
  // process is in it, or why it stays in the daemon's cgroup. A failure
  // leaves the process running where it was.
  virtual void MoveIntoScope(const std::string& volume_id, int pid, std::function<void(Result<std::string>)> done) = 0;
};

// "nbdkeeper-rbd-nbd-<volume id, escaped as systemd-escape does>.scope".
// Deterministic; an escaped id too long for a unit name (255 bytes) is cut
// and followed by "-" and a hash of the whole id (a '-' never appears
// unescaped, so the two forms cannot collide).
std::string ScopeUnitName(std::string_view volume_id);

// Whether the contents of /proc/<pid>/cgroup put the process in `unit`:
// some hierarchy's path ends with "/<unit>" (cgroup v2 "0::", or v1's
// "name=systemd"). Works through a cgroup namespace: a container sees the
// host's scope as "/../../system.slice/<unit>".
bool ProcCgroupInUnit(std::string_view proc_cgroup, std::string_view unit);

// Reads /proc/<pid>/cgroup (procfs: memory, never blocks on a disk).
// NotFound when the process is gone.
Result<std::string> ReadProcCgroup(int pid);

}  // namespace nbdk
