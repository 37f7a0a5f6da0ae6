// ClusterConfig: ceph-csi's cluster configuration file (config.json), a
// JSON array with one entry per Ceph cluster:
//
//   [{"clusterID": "rook-ceph", "monitors": ["10.0.0.1:6789"],
//     "rbd": {"radosNamespace": "", "mirrorDaemonCount": 1},
//     "readAffinity": {"enabled": true,
//                      "crushLocationLabels": ["topology.kubernetes.io/zone"]}}]
//
// Only what the RBD node needs is kept: cluster ID, monitors, the RBD
// RADOS namespace and read affinity. Keys are read as ceph-csi's Go decoder
// reads them (csi/go_json.h). Keys nbdkeeper does not use (cephFS, nfs,
// rbd.mirrorDaemonCount, ...) and unknown keys, in an entry or in "rbd", are
// accepted and ignored whatever their value, because ceph-csi adds keys over
// time and one shared file serves every version of every ceph-csi driver.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace nbdk {

struct ClusterEntry {
  std::string cluster_id;
  std::vector<std::string> monitors;  // as written: "10.0.0.1:6789", "[v2:...]", ...
  std::string rados_namespace;        // rbd.radosNamespace; "" is the default namespace
  // readAffinity: reads go to the OSD nearest the node (csi/topology.h),
  // located by these node labels, or by the daemon's
  // --crush-location-labels when the entry names none.
  bool read_affinity = false;
  std::vector<std::string> crush_location_labels;
  // A cluster from a ceph.conf (LoadClusters): its name (NAME of
  // NAME.conf, as `rbd --cluster` means it) and the file, which librados
  // and rbd-nbd then read. Both "" for a config.json entry.
  std::string name;
  std::string ceph_conf;

  // The ceph.conf that reaches this cluster: its own, else `fallback` (the
  // daemon's --ceph-conf).
  const std::string& CephConfOr(const std::string& fallback) const { return ceph_conf.empty() ? fallback : ceph_conf; }

  bool operator==(const ClusterEntry&) const = default;
};

class ClusterConfig {
 public:
  // `source` names where the entries came from in Find's error; `skipped`
  // names each file left out and why.
  explicit ClusterConfig(std::vector<ClusterEntry> entries,
                         std::string source = "the ceph-csi cluster config (ceph_csi_config)",
                         std::vector<std::string> skipped = {})
      : entries_(std::move(entries)), source_(std::move(source)), skipped_(std::move(skipped)) {}

  // The entry for `cluster_id`; FailedPrecondition naming the ID when there
  // is none (the node is missing configuration).
  Result<ClusterEntry> Find(std::string_view cluster_id) const;
  const std::vector<ClusterEntry>& entries() const { return entries_; }
  const std::vector<std::string>& skipped() const { return skipped_; }

 private:
  std::vector<ClusterEntry> entries_;
  std::string source_;
  std::vector<std::string> skipped_;
};

// Parses the file's text. InvalidArgument names the entry and field:
// "entry 1: monitors: must not be empty". Rejected: invalid JSON, a top
// level that is not an array, an entry that is not an object, a missing or
// empty clusterID, missing or empty monitors (or a monitor that is not a
// non-empty string), an "rbd" that is not an object, an rbd.radosNamespace
// that is not a string, a "readAffinity" that is not an object, its
// "enabled" not a boolean or its "crushLocationLabels" not an array of
// label keys, and a cluster ID that appears twice.
Result<ClusterConfig> ParseClusterConfig(std::string_view json);

// Reads and parses `path` (Config::ceph_csi_config). Blocking: call in
// EventLoop::RunBlocking. The file is a ConfigMap that can change while the
// daemon runs, so callers read it per request, as ceph-csi does. A missing
// file, or one that does not parse, is FailedPrecondition naming the path.
Result<ClusterConfig> LoadClusterConfig(const std::string& path);

// The clusters a request may name: config.json's (LoadClusterConfig) when
// `config_json` exists, so that file keeps meaning what it means to
// ceph-csi. Without it, a bare-metal host's ceph.conf files are enough: one
// entry per `<ceph_dir>/NAME.conf` with an fsid, its cluster ID the fsid
// (what ceph-csi users give as clusterID for an external cluster), its
// monitors mon_host's (may be empty: librados and rbd-nbd read the file's
// own mon settings), its name NAME and its ceph_conf the file. A .conf that
// does not parse or has no fsid is in skipped(), with the reason. BLOCKING.
Result<ClusterConfig> LoadClusters(const std::string& config_json, const std::string& ceph_dir);

// Where both services find a request's cluster and how they reach it: the
// files LoadClusters reads, the ceph.conf librados and rbd-nbd are given
// when the cluster's entry names none, and librados's timeout.
struct ClusterSource {
  std::string cluster_config_path;
  std::string ceph_conf;               // passed to librados and rbd-nbd; empty: their default
  std::string ceph_dir = "/etc/ceph";  // the ceph.conf files without cluster_config_path (LoadClusters)
  int rados_timeout_s = 10;
};

}  // namespace nbdk
