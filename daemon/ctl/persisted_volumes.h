// The persisted mappings: what `map --persist` asks to come back after a
// reboot, as rbdmap's /etc/ceph/rbdmap does for krbd. A JSON file
// (default /etc/nbdkeeper/volumes.json) that `apply` maps from at boot, in
// its order, and `unmap-all` unmaps in the reverse order at shutdown (both
// run by nbdkeeper-volumes.service). It names the key file, never the key.
// An operator may write or edit it by hand: only "image" is required, every
// other field has `map`'s default, and a missing "volume_id" is the one
// `map` gives an existing image (its name). "image" is `map`'s argument,
// "pool/[ns/]image[@snap]" as rbdmap's file has it: a snapshot is mapped
// read-only whatever "ro" says.
//
//   {"volumes": [{"image": "rbd/db", "cluster": "ceph", "id": "admin",
//                 "keyfile": "/etc/ceph/db.key", "fs": "ext4", "block": false,
//                 "mount": "/mnt/db", "mount_options": ["noatime"],
//                 "options": "exclusive", "ro": false, "volume_id": "db"}]}
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "daemon/ctl/ctl_args.h"

namespace nbdk::ctl {

struct PersistedVolume {
  MapSpec spec;
  std::string volume_id;  // as staged (a static volume's is its image name)
};

// A missing file is an empty list. Corruption naming the entry and field for
// anything malformed; every entry passes the rules `map` applies (the map
// and mount option allow-lists included).
Result<std::vector<PersistedVolume>> LoadPersisted(const std::string& path);
// Replaces the file atomically (temporary file, fsync, rename).
Status SavePersisted(const std::string& path, const std::vector<PersistedVolume>& volumes);

}  // namespace nbdk::ctl
