// The Controller service's work on the cluster, one BLOCKING function per
// RPC (run it in EventLoop::RunBlocking with a connection from
// RadosClients). Loop state is never touched here; the service serializes
// calls per request name / volume ID.
//
// Create: journal Lookup (cleaning stale keys) or Reserve, then the image
// (docs/ceph-csi-compat.md's order). Delete: the reverse - the image, then
// the per-volume object, then the directory key - and nothing at all while
// the image has a watcher (it is mapped somewhere).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "csi/controller_request.h"
#include "daemon/base/status.h"
#include "journal/rados_cluster.h"

namespace nbdk {

struct CreatedVolume {
  std::string volume_id;  // ceph-csi's format (csi/volume_id.h)
  int64_t size_bytes = 0;
  std::map<std::string, std::string> context;
};

// `rados_namespace` is the effective one (parameter, else config.json's).
// AlreadyExists when the name's image exists with another size.
Result<CreatedVolume> CreateVolumeBlocking(const std::shared_ptr<RadosCluster>& cluster,
                                           const CreateVolumeParams& params, const std::string& rados_namespace);

// OK when the volume does not exist (or no longer does). FailedPrecondition
// naming a watcher when the image is in use; nothing is deleted then.
Status DeleteVolumeBlocking(const std::shared_ptr<RadosCluster>& cluster, const VolumeRef& volume,
                            const std::string& rados_namespace);

// Grows the image to at least `size_bytes`; returns its size afterwards.
// NotFound when the volume does not exist.
Result<int64_t> ExpandVolumeBlocking(const std::shared_ptr<RadosCluster>& cluster, const VolumeRef& volume,
                                     int64_t size_bytes, const std::string& rados_namespace);

// OK when the volume's journal entry and image exist; NotFound otherwise.
Status CheckVolumeExistsBlocking(const std::shared_ptr<RadosCluster>& cluster, const VolumeRef& volume,
                                 const std::string& rados_namespace);

}  // namespace nbdk
