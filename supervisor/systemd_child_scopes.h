// SystemdChildScopes: the ChildScopes that asks systemd (PID 1 of the host)
// for a transient scope per rbd-nbd, over sd-bus:
// Manager.StartTransientUnit(ScopeUnitName(volume), "fail", PIDs=[pid]).
//
// Each call opens its own bus connection on a pool thread, makes its calls
// and closes it (a few ms; no connection state to keep healthy). Before
// naming any pid it checks that the bus's peer is visible in this
// process's pid namespace (SO_PEERCRED pid != 0): systemd reads the pid in
// its own namespace, so a daemon in a container without hostPID would
// otherwise move some unrelated host process.
//
// The scope:
//  - CollectMode=inactive-or-failed: once its rbd-nbd exits (unmap, crash)
//    the scope is empty, stops, and is unloaded; nothing to clean up.
//  - DefaultDependencies=no: no Conflicts=shutdown.target, so a host
//    shutdown does not stop rbd-nbd before the filesystems on its device
//    are unmounted; it ends in the final kill, as before scopes.
//  - DevicePolicy=closed, DeviceAllow=block-nbd rw: what the shipped unit
//    allows rbd-nbd in its cgroup (device rules go with the cgroup; the
//    unit's other restrictions go with the process and are kept).
// If the name is still taken (the scope of a child that just died not yet
// collected) the pid is attached to that unit instead, else retried.
// Success is the pid seen in the unit's cgroup (/proc/<pid>/cgroup), not
// the job's acceptance.
#pragma once

#include <string>

#include "base/event_loop.h"
#include "supervisor/child_scope.h"

namespace nbdk {

class SystemdChildScopes : public ChildScopes {
 public:
  // `bus_address`: an sd-bus address such as
  // "unix:path=/run/host-systemd/private" (systemd's own socket, mounted
  // into a container); empty: /run/systemd/private (root only, no D-Bus
  // daemon needed, as systemctl does), else the system bus
  // (sd_bus_open_system, honouring DBUS_SYSTEM_BUS_ADDRESS). `loop` must
  // outlive every call in flight.
  SystemdChildScopes(EventLoop& loop, std::string bus_address);

  // Errors: Unavailable (no bus, or systemd did not answer), FailedPrecondition
  // (the bus's peer is outside our pid namespace), NotFound (the pid exited
  // first), or systemd's error name and message.
  void MoveIntoScope(const std::string& volume_id, int pid, std::function<void(Result<std::string>)> done) override;

 private:
  EventLoop& loop_;
  std::string bus_address_;
};

}  // namespace nbdk
