// Config: the daemon's settings, from an optional JSON file and flags
// (each setting one row of daemon/config_settings.h).
//
// Precedence: built-in defaults < config file (--config) < flags. Parsing
// never exits or prints; every problem is an InvalidArgument naming the flag
// or JSON field and what is wrong with it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/log.h"
#include "base/status.h"
#include "csi/topology.h"
#include "encryption/kms_config.h"

namespace nbdk {

struct HostPort {
  std::string host;
  uint16_t port = 0;
};

enum class StopPolicy {
  kLeaveRunning,  // rbd-nbd children keep serving; re-adopted on next start
  kDetach,        // children are stopped cleanly; devices stay configured
};

struct Config {
  std::string csi_endpoint = "unix:///run/nbdkeeper/csi.sock";
  std::string csi_socket_path = "/run/nbdkeeper/csi.sock";  // derived from csi_endpoint
  uint32_t socket_mode = 0600;
  std::string socket_group;  // empty: the daemon's own group
  std::string node_id;       // default: hostname
  std::string driver_name = "rbd.nbdkeeper.io";
  std::string state_dir = "/var/lib/nbdkeeper";
  std::string health_listen = "127.0.0.1:9810";
  HostPort health{"127.0.0.1", 9810};  // derived from health_listen; port 0 disables
  LogLevel log_level = LogLevel::kInfo;
  std::string ceph_csi_config = "/etc/ceph-csi-config/config.json";
  // ceph-csi's KMS config for encrypted volumes (encryption/kms_config.h):
  // read per request, only for a KMS ID other than "default".
  std::string kms_config = std::string(kKmsConfigPath);
  std::string ceph_conf;  // passed to librados and rbd-nbd; empty: their default
  // Without ceph_csi_config, each NAME.conf here with an fsid is a cluster
  // (csi/cluster_config.h LoadClusters).
  std::string ceph_dir = "/etc/ceph";
  // The stable names' root (supervisor/device_links.h); "": none kept.
  std::string device_links = "/dev/nbdkeeper";
  std::string key_dir = "/run/nbdkeeper/keys";
  // Request paths are confined beneath these and <state_dir>/staging
  // (csi/node/confined_path.h). csi_root is where the orchestrator puts the
  // staging and target paths it sends: kubelet's root directory, or a
  // Nomad node plugin's stage_publish_base_dir. --kubelet-root (JSON
  // kubelet_root) is its former name, still accepted.
  std::string csi_root = "/var/lib/kubelet";
  std::vector<std::string> mount_roots;
  std::string rbd_nbd_path = "rbd-nbd";
  uint32_t io_timeout_ms = 2000;
  // A device holding IO this long without a completion has its rbd-nbd
  // asked why, and a stuck one ended and re-attached
  // (supervisor/stall_rule.h); 0: never.
  uint32_t stuck_io_limit_s = 60;
  uint32_t reattach_timeout_s = 300;
  // At most this many rbd-nbd maps and attaches starting at once
  // (supervisor/attach_queue.h); 0: no bound. 4 from scale_bench, N=32
  // under qemu TCG on 2 vCPUs: staging all 32 took 43.2 s with 2, 43.8 s
  // with 4 and 112 s with 8 (each map slower than the bound gains), and in
  // a mass heal with 8 or no bound every attach missed the 60 s device
  // deadline. 4 is the largest bound before that cliff here; a node with
  // more cores has room above it. docs/design/attach-queue.md has the table.
  uint32_t max_concurrent_attaches = 4;
  StopPolicy stop_policy = StopPolicy::kLeaveRunning;
  // Break a dead rbd-nbd's exclusive lock before re-attaching (see
  // supervisor/rbd_lock_breaker.h for when a lock counts as ours).
  bool break_dead_locks = true;
  // /status also shows each mapping's recent rbd-nbd output (off: it is
  // raw process output; the per-volume log under state_dir keeps it).
  bool status_shows_output = false;
  // CreateVolume writes the csi.storage.k8s.io/pvc/name, .../pvc/namespace
  // and .../pv/name parameters as image metadata, as ceph-csi does with its
  // --setmetadata (there off by default; on here, since the shipped
  // provisioner passes them only because it is asked to).
  bool set_metadata = true;
  // Each rbd-nbd in a systemd scope of its own on the host
  // (supervisor/systemd_child_scopes.h), so it outlives the daemon's
  // container or unit; off: children stay in the daemon's cgroup.
  bool child_scopes = true;
  // sd-bus address of the host's systemd, e.g. its private socket mounted
  // into a container; empty: /run/systemd/private, else the system bus.
  std::string systemd_bus;
  // The node's labels (csi/topology.h), as ceph-csi would read them from
  // its Node object: --node-labels and the lines of --node-labels-file
  // (read at start; a key in both is an error). Domain labels name the
  // node's topology segments (ceph-csi's --domainlabels), CRUSH location
  // labels its read affinity location where config.json's entry names none.
  NodeLabels node_labels;
  std::string node_labels_file;
  std::vector<std::string> domain_labels;
  std::vector<std::string> crush_location_labels;
  TopologySegments topology;  // derived: NodeTopology of the above
};

// What the command line asked for besides a Config.
enum class Action { kRun, kHelp, kVersion };

struct ParsedArgs {
  Action action = Action::kRun;
  Config config;
};

// Parses argv (argv[0] is skipped). Reads --config FILE if given.
Result<ParsedArgs> ParseArgs(const std::vector<std::string>& args);

// Applies a JSON config document over `config`. Unknown keys are errors.
Status ApplyConfigJson(std::string_view json, Config* config);

// "unix:///run/x.sock" or "/run/x.sock" -> "/run/x.sock".
Result<std::string> ParseUnixEndpoint(std::string_view endpoint);
// "127.0.0.1:9810", "[::1]:9810", ":9810" (all interfaces) -> HostPort.
Result<HostPort> ParseHostPort(std::string_view text);

std::string UsageText();

}  // namespace nbdk
