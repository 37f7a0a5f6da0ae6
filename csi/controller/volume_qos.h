// ceph-csi's rbd-nbd QoS StorageClass parameters (its internal/rbd/qos.go)
// as librbd's per-image QoS limits, which rbd-nbd's librbd enforces. Pure.
//
// Six limits, each from a base, a per-GiB rate and a maximum parameter:
//   rbd_qos_iops_limit        baseIops       iopsPerGiB       maxIops
//   rbd_qos_read_iops_limit   baseReadIops   readIopsPerGiB   maxReadIops
//   rbd_qos_write_iops_limit  baseWriteIops  writeIopsPerGiB  maxWriteIops
//   rbd_qos_bps_limit         baseBps        bpsPerGiB        maxBps
//   rbd_qos_read_bps_limit    baseReadBps    readBpsPerGiB    maxReadBps
//   rbd_qos_write_bps_limit   baseWriteBps   writeBpsPerGiB   maxWriteBps
// A limit is set only when its base is given; it is the base, plus, when
// baseVolSizeBytes and the per-GiB rate are given and the volume is larger,
// the rate for every whole GiB above baseVolSizeBytes, at most the maximum
// (ceph-csi's calcQosBasedOnCapacity).
//
// Where they go, as ceph-csi writes them: each limit as the image metadata
// conf_<limit> (what `rbd config image set` writes; librbd applies it as
// the image's own setting), and each QoS parameter given under ceph-csi's
// saved name (rbd_base_qos_iops_limit, rbd_iops_per_gib_limit,
// rbd_max_qos_iops_limit, ..., rbd_base_qos_vol_size), from which ceph-csi
// recomputes the limits when the volume grows.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "base/status.h"
#include "csi/controller/volume_parameters.h"

namespace nbdk {

// OK when every QoS parameter given (an empty value counts as absent, as
// ceph-csi reads them) is a decimal integer from 0 to 2^63-1, and every
// per-GiB rate or maximum has its base (ceph-csi reads them only with it).
// Otherwise InvalidArgument naming the parameter.
Status CheckQosParameters(const VolumeParameters& params);

// The image metadata for a volume of `size_bytes` under `params` (checked
// by CheckQosParameters): the conf_ limits and the saved parameters; empty
// when no base is given. A limit that would exceed 2^63-1 is 2^63-1.
std::map<std::string, std::string> QosImageMetadata(const VolumeParameters& params, int64_t size_bytes);

// ceph-csi's saved metadata keys and the parameter each saved, from which
// a grown volume's limits are computed again (ceph-csi's AdjustQOS):
// "rbd_base_qos_iops_limit" -> "baseIops", ...
std::map<std::string, std::string> SavedQosParameters();

}  // namespace nbdk
