// The commands that change what is mapped - map, unmap, unmap-all and
// apply - each returning the process's exit status (daemon/ctl/
// daemon_client.h Exit) after printing its result, or one line naming what
// went wrong (PrintError).
//
// What `map` prints is for scripts as much as for people: on a terminal a
// sentence; otherwise, or with --quiet, the device path alone on stdout
// (as `rbd device map`); with --json one object (ctl_commands.cc MapJson).
#pragma once

#include "daemon/ctl/ctl_args.h"
#include "daemon/ctl/foreign_mappings.h"
#include "daemon/ctl/map_operations.h"

namespace nbdk::ctl {

struct MapContext {
  MapOperations& ops;
  const DaemonClient& client;
  const Config& daemon;
  HostRoots roots;  // where krbd and rbd-nbd mappings are looked for
};

int MapCommand(MapContext& ctx, const CtlCommand& command);
// Unpublishes and unstages one volume and drops it from the volumes file.
// --force first unmounts the device's mounts nbdkeeper did not make.
int UnmapCommand(MapContext& ctx, const CtlCommand& command);
// Unmaps every mapped volume (--persisted: only those of the volumes file),
// the persisted ones in the reverse order of the volumes file first, the
// rest after; leaves the volumes file as it is (the shutdown side of
// `apply`). Goes on past a failure, exit 1 if any.
int UnmapAllCommand(MapContext& ctx, const CtlCommand& command);
// Maps every persisted volume that is not mapped; publishes again the ones
// that are (idempotent). Prints each volume's time and the total.
int ApplyCommand(MapContext& ctx, const CtlCommand& command);

}  // namespace nbdk::ctl
