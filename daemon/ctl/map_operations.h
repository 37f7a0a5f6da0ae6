// The CSI calls behind map, unmap and expand, as a CO would make them:
// CreateVolume (map --size), NodeStageVolume under the daemon's
// <state_dir>/staging, NodePublishVolume onto --mount; the reverse for
// unmap; ControllerExpandVolume and NodeExpandVolume for expand.
#pragma once

#include <cstdint>
#include <string>

#include "daemon/ctl/daemon_client.h"
#include "daemon/ctl/volume_table.h"

namespace nbdk::ctl {

struct MappedVolume {
  std::string volume_id;
  std::string device;
  std::string mount_point;  // "" for a block volume without --mount
};

class MapOperations {
 public:
  MapOperations(DaemonClient& client, const Config& daemon) : client_(client), daemon_(daemon) {}

  // Creates the image when spec.size_bytes > 0, then stages and publishes.
  // spec.cluster_id must be set.
  Result<MappedVolume> Map(const MapSpec& spec);
  // Stages and publishes a volume `map` made before (never creates).
  Result<MappedVolume> MapPersisted(const MapSpec& spec, const std::string& volume_id);
  Status Unmap(const VolumeRow& volume);
  // Grows the image (a volume made with --size; for another, `rbd resize`
  // first), then the device and filesystem. Returns the device's size.
  Result<int64_t> Expand(const VolumeRow& volume, int64_t size_bytes, const MapSpec& credentials);

  // What the last failing call ended with.
  const CtlError& last_error() const { return error_; }

 private:
  Status StageAndPublish(const MapSpec& spec, const std::string& volume_id,
                         const std::map<std::string, std::string>& context, const std::string& key);
  Result<MappedVolume> Describe(const std::string& volume_id);
  Status Failed(const CtlError& error);

  DaemonClient& client_;
  const Config& daemon_;
  CtlError error_;
};

}  // namespace nbdk::ctl
