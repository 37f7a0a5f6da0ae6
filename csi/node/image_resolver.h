// ResolveImage: which RBD image a NodeStageVolume request means, and how to
// reach its cluster - ceph-csi's read side.
//
// The cluster comes from config.json (read per request: it is a ConfigMap
// that may change), or without one from a ceph.conf (LoadClusters). A static volume names its pool and image directly.
// A dynamic volume's ID carries the cluster ID and the image pool's ID; the image name is the volume context's
// imageName or, failing that, the omap journal's csi.volume.<uuid> -> csi.imagename (csi-vol-<uuid> when the key is
// absent), read from the journal pool with librados off the loop. Loop thread only; `done` runs on the loop. The Node's
// alone: the Controller shares only the ClusterSource (csi/cluster_config.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "ceph/image_spec.h"
#include "ceph/rados_clients.h"
#include "csi/cluster_config.h"
#include "csi/node/node_request.h"
#include "csi/topology.h"

namespace nbdk {

struct ResolvedImage {
  std::string cluster_id;
  ImageSpec image;  // with monitors, user and keyfile filled in
  // rbd-nbd options that localize its reads (csi/topology.h), when the
  // cluster's entry enables readAffinity and the node has a location.
  std::vector<std::string> read_affinity;
};

struct ResolveOptions {
  ClusterSource cluster;  // what the Controller reads its clusters from too
  // Read affinity: the node's labels, and the labels that locate it where
  // the cluster's entry names none.
  NodeLabels node_labels;
  std::vector<std::string> crush_location_labels;
};

void ResolveImage(EventLoop& loop, RadosClients& rados, const ResolveOptions& options, const StageRequest& request,
                  const std::string& keyfile, std::function<void(Result<ResolvedImage>)> done);

}  // namespace nbdk
