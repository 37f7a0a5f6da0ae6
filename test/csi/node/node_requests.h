// Valid Node requests for the request parser's tests (csi/node/node_request.h)
// to break one field at a time, and the check of the error each gives.
#pragma once

#include <gtest/gtest.h>

#include <string_view>

#include "csi/node/node_request.h"

namespace nbdk {

using Mode = csi::v1::VolumeCapability::AccessMode;

inline constexpr char kVolumeId[] = "0001-0009-rook-ceph-0000000000000002-b0a3c3d5-1d1a-4a9e-9a8f-2d7e0d9b7d51";
inline constexpr char kKey[] = "AQBsecretKEYvalue0123456789abcdefghij==";
inline constexpr char kStaging[] = "/var/lib/kubelet/plugins/kubernetes.io/csi/rbd.csi.ceph.com/abc/globalmount";
inline constexpr char kTarget[] = "/var/lib/kubelet/pods/p1/volumes/kubernetes.io~csi/pvc-1/mount";

inline void SetMount(csi::v1::VolumeCapability* cap, Mode::Mode mode = Mode::SINGLE_NODE_WRITER) {
  cap->mutable_mount()->set_fs_type("ext4");
  cap->mutable_access_mode()->set_mode(mode);
}

inline csi::v1::NodeStageVolumeRequest ValidStage() {
  csi::v1::NodeStageVolumeRequest r;
  r.set_volume_id(kVolumeId);
  r.set_staging_target_path(kStaging);
  SetMount(r.mutable_volume_capability());
  (*r.mutable_secrets())["userID"] = "csi-rbd-node";
  (*r.mutable_secrets())["userKey"] = kKey;
  auto& ctx = *r.mutable_volume_context();
  ctx["clusterID"] = "rook-ceph";
  ctx["pool"] = "replicapool";
  ctx["imageName"] = "csi-vol-b0a3c3d5-1d1a-4a9e-9a8f-2d7e0d9b7d51";
  ctx["imageFeatures"] = "layering";
  ctx["mounter"] = "rbd-nbd";
  ctx["mapOptions"] = "krbd:queue_depth=1024;nbd:try-netlink,io-timeout=0";
  ctx["unmapOptions"] = "nbd:force";
  ctx["csi.storage.k8s.io/pv/name"] = "pvc-1";
  return r;
}

template <typename T>
void ExpectError(const Result<T>& r, Code code, std::string_view mentions) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), code) << r.status().ToString();
  EXPECT_NE(r.status().message().find(mentions), std::string::npos)
      << "'" << r.status().message() << "' should mention '" << mentions << "'";
}

inline csi::v1::NodePublishVolumeRequest ValidPublish() {
  csi::v1::NodePublishVolumeRequest r;
  r.set_volume_id(kVolumeId);
  r.set_staging_target_path(kStaging);
  r.set_target_path(kTarget);
  SetMount(r.mutable_volume_capability());
  return r;
}

}  // namespace nbdk
