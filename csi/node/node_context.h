// NodeContext: what the CSI Node operations share. Loop thread only; every
// referenced object outlives the Node service.
#pragma once

#include <string>
#include <vector>

#include "base/event_loop.h"
#include "ceph/rados_clients.h"
#include "csi/node/image_resolver.h"
#include "csi/node/node_env.h"
#include "csi/node/staged_volumes.h"
#include "csi/topology.h"
#include "encryption/kms_config.h"
#include "encryption/luks_volume.h"
#include "netlink/nbd_sysfs.h"
#include "supervisor/supervisor.h"

namespace nbdk {

struct NodeOptions {
  std::string node_id;
  std::string key_dir = "/run/nbdkeeper/keys";  // tmpfs: keys never reach a disk
  // Request paths lie beneath one of these (csi/node/confined_path.h).
  std::vector<std::string> path_roots = {"/var/lib/kubelet"};
  std::string mountinfo_path = "/proc/self/mountinfo";
  std::string sysfs_root = kSysfsRoot;
  std::string proc_root = "/proc";  // who has a device open (host/device_users.h)
  ResolveOptions resolve;
  // ceph-csi's KMS config for encrypted volumes (encryption/kms_config.h).
  std::string kms_config_path = std::string(kKmsConfigPath);
  std::string boot_id;
  int64_t max_volumes = 0;    // NodeGetInfo; 0: no limit reported
  TopologySegments topology;  // NodeGetInfo's accessible_topology; empty: none
};

struct NodeContext {
  EventLoop& loop;
  Supervisor& supervisor;
  RadosClients& rados;
  StagedVolumes& volumes;
  NodeEnv& host;  // key files, stash, mount points, probe, mkfs, mounts
  NodeOptions options;
  // Set once the journal is loaded and every journaled volume healed; until
  // then volume calls are UNAVAILABLE (a stage racing the heal of the same
  // volume could map it twice).
  bool healed = false;
};

// The block device a staged volume's filesystem or bind mount sits on: its
// LUKS mapper when it is encrypted, else its nbd device.
inline std::string StagedDevice(const VolumeRecord& record) {
  return record.luks_mapper.empty() ? record.nbd_device : LuksMapperPath(record.luks_mapper);
}

// Where a staged volume lives under its staging path: the filesystem's
// mount point, or the file a block device is bind-mounted on.
inline std::string StagedMountPoint(const std::string& staging_path, const std::string& volume_id) {
  return staging_path + "/" + volume_id;
}

}  // namespace nbdk
