// Which cluster a command means, as `rbd` would: with ceph-csi's
// config.json on the host, --cluster names one of its cluster IDs (none
// needed when it lists one); without it, --cluster NAME means
// /etc/ceph/NAME.conf (default "ceph") and the daemon is sent that file's
// fsid (csi/cluster_config.h LoadClusters, the daemon's own view).
#pragma once

#include <string>

#include "base/status.h"
#include "csi/cluster_config.h"

namespace nbdk::ctl {

struct ChosenCluster {
  std::string cluster_id;  // what the CSI requests carry
  std::string name;        // the cluster's name for key lookups ("ceph" for a config.json cluster)
  std::string ceph_conf;   // its ceph.conf; "" for a config.json cluster
};

// `asked`: --cluster ("" when not given), an ID or a ceph.conf's NAME.
// InvalidArgument listing what there is when nothing or several match.
Result<ChosenCluster> ChooseCluster(const ClusterConfig& clusters, const std::string& asked);

// BLOCKING. ChooseCluster on the clusters the daemon reads (config.json, else
// <ceph_dir>/*.conf).
Result<ChosenCluster> ChooseCluster(const std::string& config_json, const std::string& ceph_dir,
                                    const std::string& asked);

}  // namespace nbdk::ctl
