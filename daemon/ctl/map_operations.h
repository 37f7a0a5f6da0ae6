// The CSI calls behind map, unmap and expand, as a CO would make them:
// CreateVolume (map --size), NodeStageVolume under the daemon's
// <state_dir>/staging, NodePublishVolume onto --mount; the reverse for
// unmap; ControllerExpandVolume and NodeExpandVolume for expand.
#pragma once

#include <cstdint>
#include <string>

#include "daemon/ctl/cluster_choice.h"
#include "daemon/ctl/daemon_client.h"
#include "daemon/ctl/volume_table.h"

namespace nbdk::ctl {

struct MappedVolume {
  std::string volume_id;
  std::string device;
  std::string mount_point;  // "" for a block volume without --mount
  std::string link;         // the stable name (/dev/nbdkeeper/...); "" when the daemon keeps none
};

class MapOperations {
 public:
  MapOperations(DaemonClient& client, const Config& daemon) : client_(client), daemon_(daemon) {}

  // Creates the image when spec.size_bytes > 0, then stages and publishes
  // on `cluster` (daemon/ctl/cluster_choice.h).
  Result<MappedVolume> Map(const MapSpec& spec, const ChosenCluster& cluster);
  // Stages and publishes a volume `map` made before (never creates).
  Result<MappedVolume> MapPersisted(const MapSpec& spec, const ChosenCluster& cluster, const std::string& volume_id);
  Status Unmap(const VolumeRow& volume);
  // Grows the image (a volume made with --size, with the key of
  // credentials' cluster and user; for another, `rbd resize` first), then
  // the device and filesystem. Returns the device's size.
  Result<int64_t> Expand(const VolumeRow& volume, int64_t size_bytes, const MapSpec& credentials);

  // What the last failing call ended with.
  const CtlError& last_error() const { return error_; }

 private:
  Status StageAndPublish(const MapSpec& spec, const std::string& volume_id,
                         const std::map<std::string, std::string>& context, const std::string& key);
  // The volume as /status shows it once its stable name is placed (or a
  // short wait passed: the daemon may keep none).
  Result<MappedVolume> Describe(const std::string& volume_id);
  Status Failed(const CtlError& error);

  DaemonClient& client_;
  const Config& daemon_;
  CtlError error_;
};

}  // namespace nbdk::ctl
