// The volumes of nbdkeeperd's /status page, as rows, and how `list` shows
// them: a table (coloured on a terminal) or JSON for scripts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace nbdk::ctl {

struct VolumeRow {
  std::string volume_id;
  std::string image;          // "pool/[ns/]image"
  std::string snap;           // the snapshot mapped; "" for the image itself
  std::string access;         // "ext4", "xfs", "block"
  std::string journal_state;  // "staged", "staging", ""
  std::string state;          // the mapping's: Connected, Reattaching, ..., Unmapped, StaleBoot
  std::string device;         // "" when none is the volume's now (StaleBoot: the node rebooted)
  int pid = 0;
  unsigned restarts = 0;
  double seconds_in_state = 0;
  std::string staging_path;
  std::vector<std::string> targets;
  std::string log;          // the daemon's per-volume rbd-nbd log file
  std::string cgroup_mode;  // "scope", "daemon", "" (no mapping)
  std::string scope;        // cgroup_mode "scope": the systemd unit
  std::string link;         // the stable name /dev/nbdkeeper/..., once placed
  std::string luks_mapper;  // an encrypted volume's open mapper, "luks-rbd-<id>"; "" otherwise
  // Where the volume is mounted for use: its first target, else (a
  // filesystem) its staging mount point, else "".
  std::string MountPoint() const;
  // "pool/[ns/]image[@snap]": what the volume maps.
  std::string Spec() const { return image + (snap.empty() ? "" : "@" + snap); }
};

struct DaemonStatus {
  std::string version;
  bool ready = false;
  std::vector<VolumeRow> volumes;
};

// Parses /status. Corruption naming the field for anything unexpected.
Result<DaemonStatus> ParseDaemonStatus(std::string_view json);

// The volume `key` names: its volume ID, what it maps ("pool/image[@snap]",
// or "image[@snap]" when only one volume maps that), device, staging path,
// staging mount point or a target. nullptr when none does.
const VolumeRow* FindVolume(const DaemonStatus& status, const std::string& key);

// The table: volume, image, device, state, pid, restarts, last heal, mount point.
std::string RenderTable(const DaemonStatus& status, bool colour);
// The same rows as a JSON array, one object per volume: `rbd device list
// --format json`'s keys (id: rbd-nbd's pid, pool, namespace, image: the
// name alone, snap: "-" for none, device) beside nbdkeeper's (volume, spec:
// "pool/[ns/]image[@snap]", link: the stable name, access, state, pid,
// restarts, seconds_in_state, mount_point, cgroup_mode, scope, targets).
std::string RenderJson(const DaemonStatus& status);

}  // namespace nbdk::ctl
