#include "daemon/ctl/cluster_choice.h"

#include "base/quote_field.h"

namespace nbdk::ctl {
namespace {

ChosenCluster From(const ClusterEntry& e) { return {e.cluster_id, e.name.empty() ? "ceph" : e.name, e.ceph_conf}; }

std::string Available(const ClusterConfig& clusters) {
  std::string out;
  for (const ClusterEntry& e : clusters.entries()) {
    out += (out.empty() ? "" : ", ") + (e.name.empty() ? e.cluster_id : e.name + " (fsid " + e.cluster_id + ")");
  }
  out = out.empty() ? "no cluster is configured" : "configured: " + out;
  for (const std::string& s : clusters.skipped()) out += "; skipped " + s;
  return out;
}

}  // namespace

Result<ChosenCluster> ChooseCluster(const ClusterConfig& clusters, const std::string& asked) {
  const std::string wanted = asked.empty() ? "ceph" : asked;
  for (const ClusterEntry& e : clusters.entries()) {
    if (e.name == wanted || (!asked.empty() && e.cluster_id == asked)) return From(e);
  }
  // config.json's only cluster needs no name; a ceph.conf cluster other
  // than "ceph" does, as for rbd.
  const auto& all = clusters.entries();
  if (asked.empty() && all.size() == 1 && all.front().name.empty()) return From(all.front());
  if (asked.empty()) return Status::InvalidArgument("name one with --cluster (" + Available(clusters) + ")");
  return Status::InvalidArgument("--cluster " + QuoteField(asked) + ": no such cluster (" + Available(clusters) + ")");
}

Result<ChosenCluster> ChooseCluster(const std::string& config_json, const std::string& ceph_dir,
                                    const std::string& asked) {
  auto clusters = LoadClusters(config_json, ceph_dir);
  if (!clusters.ok()) return clusters.status();
  return ChooseCluster(*clusters, asked);
}

}  // namespace nbdk::ctl
