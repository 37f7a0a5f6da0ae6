// Test-only: the node DaemonSet's nbdkeeperd container, run by podman on
// the test VM as kubelet would run it. Its image, flags and mounts come from
// deploy/kubernetes/node-daemonset.yaml through daemonset_podman.py, so the
// test runs what the manifest says and cannot drift from it. Blocking; every
// podman call is an argv, never a shell. Podman's storage is whatever
// CONTAINERS_STORAGE_CONF names (see test/vm/README.md, containers).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace nbdk::containertest {

// `podman run` of the DaemonSet's nbdkeeperd container.
struct DaemonSetContainer {
  std::string image;                     // the manifest's image
  std::vector<std::string> options;      // privileged, hostPID, hostNetwork, env, mounts
  std::vector<std::string> args;         // the daemon's flags, $(VAR) expanded
  std::vector<std::string> create_dirs;  // DirectoryOrCreate host paths
  std::string csi_endpoint;              // the CSI socket as seen from the host
  int health_port = 0;                   // --health-listen's port on the host

  // Runs daemonset_podman.py on `manifest` for a node named `node_name`,
  // with the ceph-csi-config ConfigMap's contents in `config_map_dir`.
  static Result<DaemonSetContainer> FromManifest(const std::string& manifest, const std::string& node_name,
                                                 const std::string& config_map_dir);

  // Creates the DirectoryOrCreate paths, then `podman run -d --name NAME`
  // of `image` (another tag: an upgrade) with the daemon's flags and
  // `extra_args` after them. The container is left running; the error
  // names podman's output.
  Status Run(const std::string& name, const std::string& image, const std::vector<std::string>& extra_args = {}) const;
};

// `podman ARGS...`: its stdout, or an error with its exit and output.
Result<std::string> Podman(const std::vector<std::string>& args);

}  // namespace nbdk::containertest
