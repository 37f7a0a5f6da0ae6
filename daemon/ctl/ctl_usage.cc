// nbdkeeperctl --help: the commands, then each row of the option table
// (ctl_args.cc), so the help and the man page made of it (help2man) cannot
// leave an option out.
#include <algorithm>
#include <string>

#include "daemon/ctl/ctl_args.h"

namespace nbdk::ctl {

std::string CtlUsage() {
  std::string u = R"(Usage: nbdkeeperctl [global options] COMMAND [arguments]
The operator's command line for nbdkeeperd: maps Ceph RBD images through the
daemon's CSI socket and reads its health endpoint.

Commands:
  map [POOL/[NAMESPACE/]]IMAGE[@SNAP]
                     stage (and with --mount publish) the image (pool "rbd"
                     when none is named), or its snapshot SNAP read-only (as
                     rbd device map). Prints the device path alone unless on
                     a terminal
  unmap IMAGE|PATH   unpublish and unstage (IMAGE, volume ID, device or
                     mount) and drop it from the volumes file
  unmap-all          unmap every volume, persisted ones in the volumes file's
                     reverse order; the file stays (shutdown:
                     nbdkeeper-volumes.service)
  expand IMAGE SIZE  grow the image (volumes made with --size), device and filesystem
  list, status       the volumes table
  watch              the table, refreshed every second
  logs VOLUME        the rbd-nbd output the daemon kept for a volume
  health             exit 0 when ready and every volume is connected
  apply              map every persisted volume that is not mapped (boot)

Options (the commands an option applies to in brackets; without, every one):
)";
  for (const CtlOptionDoc& o : CtlOptionDocs()) {
    std::string spelling = (o.alias.empty() ? "" : std::string(o.alias) + ", ") + std::string(o.name);
    if (!o.value.empty()) spelling += " " + std::string(o.value);
    spelling.resize(std::max<size_t>(spelling.size() + 1, 24), ' ');
    u += "  " + spelling + (o.commands.empty() ? "" : "[" + o.commands + "] ") + std::string(o.help) + "\n";
  }
  u += R"(  -h, --help            print this text and exit
  --version             print the version and exit

Clusters: with ceph-csi's config.json (the daemon's ceph_csi_config),
--cluster names one of its cluster IDs; without it, --cluster NAME means
/etc/ceph/NAME.conf (default ceph), as for rbd. Keys: --keyfile FILE holds
the cephx key (or a keyring); without it, the keyring librados would read
(the ceph.conf's key, keyfile or keyring settings, else
/etc/ceph/NAME.client.USER.keyring). Never on the command line.

Exit status:
  0  done
  1  the daemon refused or failed the operation (the message says why)
  2  bad command line
  3  nbdkeeperd is not running (no socket, or nothing listens)
  4  no permission on the daemon's socket
  5  no such volume or image
  6  health: the daemon is not ready, or a volume is not connected
)";
  return u;
}

}  // namespace nbdk::ctl
