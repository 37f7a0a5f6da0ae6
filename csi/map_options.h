// ceph-csi's mapOptions / unmapOptions volume context values, read for
// rbd-nbd.
//
// Format (ceph-csi examples/rbd/storageclass.yaml):
//   "<mounter>:op1,op2;<mounter>:op1,op2", e.g.
//   "krbd:lock_on_read,queue_depth=1024;nbd:try-netlink,reattach-timeout=600"
// Sections are split on ';' and the mounter on the first ':' (values may
// contain ':'). The mounter is "krbd" or "nbd" in any case; a section with
// no mounter is krbd's, as in ceph-csi. When a mounter has several sections
// the last one wins, again as in ceph-csi. nbdkeeper uses only the nbd part,
// whose options supervisor/rbd_nbd_options.h allow-lists: MapOptionArguments
// and UnmapOptionsCsv are the one readers of a mapOptions and an
// unmapOptions value, for CreateVolume's StorageClass parameters and
// NodeStageVolume's volume context alike.
// Pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace nbdk {

// The nbd section of a mapOptions/unmapOptions value, trimmed; "" when
// there is none. InvalidArgument for an unknown mounter ("rbd:...").
Result<std::string> NbdOptionSection(std::string_view value);

// The rbd-nbd arguments a mapOptions value asks for: its nbd section through
// the allow-list (supervisor/rbd_nbd_options.h ParseRbdNbdOptions), e.g.
// "krbd:lock_on_read;nbd:try-netlink" -> {"--try-netlink"}; for a
// snapshot's mapping, also through CheckSnapshotMapOptions. InvalidArgument
// from any step.
Result<std::vector<std::string>> MapOptionArguments(std::string_view value, bool snapshot = false);

// The nbd section of an unmapOptions value, e.g. "krbd:force;nbd:force" ->
// "force". nbdkeeper never puts it on a command line; it is kept for
// ceph-csi, which hands it to `rbd unmap --options` as one value, so a
// plain option list is all it may be: InvalidArgument otherwise.
Result<std::string> UnmapOptionsCsv(std::string_view value);

}  // namespace nbdk
