// SupervisorConfig and the requests the Supervisor accepts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ceph/ceph_address.h"
#include "ceph/image_spec.h"
#include "netlink/nbd_sysfs.h"

namespace nbdk {

struct SupervisorConfig {
  std::string rbd_nbd_path = "/usr/bin/rbd-nbd";
  // Per-volume child output logs go to <state_dir>/logs/<volume>.log.
  std::string state_dir = "/var/lib/nbdkeeper";
  // io_timeout is written to <sysfs_root>/block/nbdN/queue/io_timeout.
  std::string sysfs_root = kSysfsRoot;
  // Block-layer queue timeout set after each map (the kernel's default is
  // 30 s): IO in flight at a death moves to the re-attached connection at
  // its first tick after the re-attach. 2 s, measured against 1 s and 5 s
  // (reattach_bench, docs/design/kernel-timeouts.md): the shortest stall,
  // and one kernel line per request every 2 s while a slow cluster holds IO.
  // 0: leave the kernel's value alone.
  uint32_t io_timeout_ms = 2000;
  // Passed as --reattach-timeout: how long the kernel keeps a dead device
  // waiting for an attach before failing IO.
  uint32_t reattach_timeout_s = 300;
  // Attach attempts stop this long before the kernel's deadline, so a late
  // attach cannot race the kernel failing IO.
  uint64_t reattach_safety_margin_ms = 10000;
  // A map (or attach) that prints no device line in this time is killed;
  // counted from its start, not from when it was queued.
  uint64_t map_deadline_ms = 60000;
  // At most this many rbd-nbd maps and attaches start at once; the rest
  // wait in the AttachQueue (re-attaches first). 0: no bound. The daemon's
  // default, and the measurement behind it, is in daemon/config.h.
  size_t max_concurrent_attaches = 0;
  // Reattach retries: the first is immediate, then initial, 2x, 4x ... cap.
  uint64_t backoff_initial_ms = 500;
  uint64_t backoff_cap_ms = 10000;
  // A foreign writer a re-attach sees (image_fence.h) fences the volume
  // once it stayed this long, re-listed at each retry; one that leaves
  // sooner (a resize, a snapshot, a backup's open) was a brief holder.
  uint64_t foreign_writer_persist_ms = 3000;
  // LINK_DEAD for a mapping whose server still runs: wait this long for its
  // exit; if it is still running then, kill it so the re-attach can start.
  uint64_t link_dead_grace_ms = 2000;
  // The stall watch (stall_rule.h): a Connected device's IO counters are
  // sampled this often, and a server whose device held IO this long
  // without a completion is asked why; stuck, it is ended and re-attached.
  // 60 s: above an OSD's failure detection and peering (20 s heartbeat
  // grace, then a new map) and librbd's 30 s wait for a lock owner's
  // answer, so neither looks stuck. 0 in either turns the watch off.
  uint64_t stall_sample_ms = 5000;
  uint64_t stuck_io_limit_ms = 60000;
  // A planned unmap waits this long for the server to exit after
  // `rbd-nbd unmap` succeeded, then sends SIGTERM.
  uint64_t unmap_exit_wait_ms = 10000;
  uint64_t unmap_command_timeout_ms = 30000;
  // Lines of child output kept in memory per mapping (for /status).
  size_t output_tail_lines = 20;
  // Each per-volume log file is cut back to its last half when it grows
  // past this size.
  size_t log_file_max_bytes = 256 * 1024;
  // Environment for rbd-nbd children ("KEY=VALUE"); empty: inherit ours.
  std::vector<std::string> child_env;
};

// <state_dir>/logs/<volume>.log: one volume's rbd-nbd output.
inline std::string OutputLogPath(const SupervisorConfig& config, const std::string& volume_id) {
  return config.state_dir + "/logs/" + volume_id + ".log";
}

struct MapRequest {
  // [A-Za-z0-9._-], 1-128 characters, not starting with '.'; names the
  // mapping and its log file.
  std::string volume_id;
  ImageSpec image;
  bool read_only = false;
  // Extra rbd-nbd options appended after ours, as argv tokens
  // ({"--exclusive"}), allow-listed (supervisor/rbd_nbd_options.h).
  std::vector<std::string> map_options;
  // nbd backend cookie; empty: the volume id.
  std::string cookie;
  // Other nodes may map the image too (MULTI_NODE_MULTI_WRITER block): the
  // image's other clients do not keep this one from mapping it
  // (supervisor/image_fence.h). Read-only maps are never fenced either.
  bool multi_node = false;
  // The Ceph clients of this volume's earlier rbd-nbd processes, as the
  // node journal keeps them: their watches and lock are not foreign.
  std::vector<CephClient> own_clients;
  // An adopted server whose own clients were not yet known when the
  // journal was last written: the image's clients when it was started
  // (VolumeRecord::rbd_clients_before). The clients since are its own.
  std::optional<std::vector<CephClient>> clients_before_server;
};

// A running rbd-nbd server this daemon did not spawn (found after a daemon
// restart). Its exit status will never be known.
struct AdoptRequest {
  MapRequest map;      // what it serves, as it was mapped
  std::string device;  // "/dev/nbdN"
  int pid = 0;
};

}  // namespace nbdk
