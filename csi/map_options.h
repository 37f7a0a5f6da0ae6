// ceph-csi's mapOptions / unmapOptions volume context values, read for
// rbd-nbd.
//
// Format (ceph-csi examples/rbd/storageclass.yaml):
//   "<mounter>:op1,op2;<mounter>:op1,op2", e.g.
//   "krbd:lock_on_read,queue_depth=1024;nbd:try-netlink,reattach-timeout=600"
// Sections are split on ';' and the mounter on the first ':' (values may
// contain ':'). The mounter is "krbd" or "nbd" in any case; a section with
// no mounter is krbd's, as in ceph-csi. When a mounter has several sections
// the last one wins, again as in ceph-csi. nbdkeeper uses only the nbd part.
// Pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "daemon/base/status.h"

namespace nbdk {

// The nbd section of a mapOptions/unmapOptions value, trimmed; "" when
// there is none. InvalidArgument for an unknown mounter ("rbd:...").
Result<std::string> NbdOptionSection(std::string_view value);

// Turns a comma-separated nbd option list into rbd-nbd arguments, one per
// option: "try-netlink,quiesce-hook=/x" -> {"--try-netlink",
// "--quiesce-hook=/x"}. Leading "--" on an option is accepted; blanks around
// options and empty options are dropped. InvalidArgument, naming the option:
//  - a name that is not [A-Za-z0-9][A-Za-z0-9_-]*;
//  - an empty value ("opt="), or one with whitespace or control characters
//    (argv is never given to a shell, but a newline would corrupt logs and
//    the stash);
//  - --io-timeout (or its old alias --timeout) with a value other than 0:
//    when Ceph stalls longer than the timeout, the kernel fails all I/O on
//    the device with EIO and the filesystem goes read-only - exactly the
//    outage nbdkeeper exists to prevent; nbdkeeper manages the block queue
//    timeout itself.
// Options that nbdkeeper sets itself (--device, --cookie, --keyfile, ...)
// are the rbd-nbd argv builder's business (supervisor/rbd_nbd_argv.h).
Result<std::vector<std::string>> NbdOptionArgs(std::string_view csv);

}  // namespace nbdk
