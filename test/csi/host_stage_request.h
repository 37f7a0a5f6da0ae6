// What the tests that send requests to a real nbdkeeperd on the host (no
// nbd, no Ceph) start from: a NodeStageVolume request the daemon accepts up
// to the point of reaching the cluster, for them to spoil one field of.
#pragma once

#include <string>

#include "csi/proto/csi.pb.h"

namespace nbdk::test {

// The cephx key in the request's secret, to check no answer ever shows it.
inline constexpr char kKey[] = "AQBpZ2FkZ2V0c2VjcmV0a2V5MDAwMDAwMDAwMDAwMA==";
// A ceph-csi volume ID: cluster "test", pool 2, object uuid.
inline constexpr char kVolumeId[] = "0001-0004-test-0000000000000002-b0a3c3d5-1d1a-4a9e-9a8f-2d7e0d9b7d51";
// The daemon's ceph_csi_config naming cluster "test" (its monitor refuses).
inline constexpr char kCephCsiConfig[] = R"([{"clusterID": "test", "monitors": ["127.0.0.1:1"]}])";

// kVolumeId staged at `staging_target_path` as ext4, single-node writer,
// with the node-stage secret and ceph-csi's volume context.
inline csi::v1::NodeStageVolumeRequest HostStageRequest(const std::string& staging_target_path) {
  csi::v1::NodeStageVolumeRequest r;
  r.set_volume_id(kVolumeId);
  r.set_staging_target_path(staging_target_path);
  r.mutable_volume_capability()->mutable_mount()->set_fs_type("ext4");
  r.mutable_volume_capability()->mutable_access_mode()->set_mode(
      csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  (*r.mutable_secrets())["userID"] = "nbdk";
  (*r.mutable_secrets())["userKey"] = kKey;
  (*r.mutable_volume_context())["clusterID"] = "test";
  (*r.mutable_volume_context())["pool"] = "rbd";
  return r;
}

}  // namespace nbdk::test
