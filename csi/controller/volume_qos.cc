#include "csi/controller/volume_qos.h"

#include <limits>
#include <optional>

namespace nbdk {
namespace {

struct QosLimit {
  const char* limit;  // librbd's setting
  const char* base;   // the StorageClass's parameters
  const char* per_gib;
  const char* max;
  const char* saved_base;  // ceph-csi's image metadata for each
  const char* saved_per_gib;
  const char* saved_max;
};

constexpr QosLimit kLimits[] = {
    {"rbd_qos_iops_limit", "baseIops", "iopsPerGiB", "maxIops", "rbd_base_qos_iops_limit", "rbd_iops_per_gib_limit",
     "rbd_max_qos_iops_limit"},
    {"rbd_qos_read_iops_limit", "baseReadIops", "readIopsPerGiB", "maxReadIops", "rbd_base_qos_read_iops_limit",
     "rbd_read_iops_per_gib_limit", "rbd_max_qos_read_iops_limit"},
    {"rbd_qos_write_iops_limit", "baseWriteIops", "writeIopsPerGiB", "maxWriteIops", "rbd_base_qos_write_iops_limit",
     "rbd_write_iops_per_gib_limit", "rbd_max_qos_write_iops_limit"},
    {"rbd_qos_bps_limit", "baseBps", "bpsPerGiB", "maxBps", "rbd_base_qos_bps_limit", "rbd_bps_per_gib_limit",
     "rbd_max_qos_bps_limit"},
    {"rbd_qos_read_bps_limit", "baseReadBps", "readBpsPerGiB", "maxReadBps", "rbd_base_qos_read_bps_limit",
     "rbd_read_bps_per_gib_limit", "rbd_max_qos_read_bps_limit"},
    {"rbd_qos_write_bps_limit", "baseWriteBps", "writeBpsPerGiB", "maxWriteBps", "rbd_base_qos_write_bps_limit",
     "rbd_write_bps_per_gib_limit", "rbd_max_qos_write_bps_limit"},
};

constexpr char kBaseVolSize[] = "baseVolSizeBytes";
constexpr char kSavedBaseVolSize[] = "rbd_base_qos_vol_size";
constexpr char kConfPrefix[] = "conf_";  // librbd reads image metadata conf_<option> as the image's setting
constexpr uint64_t kMaxLimit = std::numeric_limits<int64_t>::max();  // ceph-csi's ParseInt(v, 10, 64)
constexpr uint64_t kGiB = uint64_t{1} << 30;

// The parameter as a number; an empty value is absent, as ceph-csi reads
// them. Only after CheckQosParameters.
std::optional<uint64_t> Value(const VolumeParameters& params, const char* name) {
  auto it = params.find(name);
  if (it == params.end() || it->second.empty()) return std::nullopt;
  auto n = DecimalParameter(params, name, "");
  return n.ok() ? *n : std::nullopt;
}

Status CheckOne(const VolumeParameters& params, const char* name) {
  auto it = params.find(name);
  if (it == params.end() || it->second.empty()) return Status::Ok();
  auto n = DecimalParameter(params, name, "IO operations or bytes per second");
  if (!n.ok()) return n.status();
  if (**n > kMaxLimit) return Status::InvalidArgument(std::string("parameters.") + name + ": larger than 2^63-1");
  return Status::Ok();
}

}  // namespace

Status CheckQosParameters(const VolumeParameters& params) {
  NBDK_RETURN_IF_ERROR(CheckOne(params, kBaseVolSize));
  for (const QosLimit& q : kLimits) {
    for (const char* name : {q.base, q.per_gib, q.max}) NBDK_RETURN_IF_ERROR(CheckOne(params, name));
    const bool base = Value(params, q.base).has_value();
    for (const char* name : {q.per_gib, q.max}) {
      if (!base && Value(params, name)) {
        return Status::InvalidArgument(std::string("parameters.") + name + ": needs " + q.base +
                                       " (without it ceph-csi sets no limit)");
      }
    }
  }
  return Status::Ok();
}

std::map<std::string, std::string> QosImageMetadata(const VolumeParameters& params, int64_t size_bytes) {
  std::map<std::string, std::string> out;
  const std::optional<uint64_t> base_size = Value(params, kBaseVolSize);
  const uint64_t size = size_bytes > 0 ? static_cast<uint64_t>(size_bytes) : 0;
  for (const QosLimit& q : kLimits) {
    std::optional<uint64_t> base = Value(params, q.base);
    if (!base) continue;
    std::optional<uint64_t> per_gib = Value(params, q.per_gib), max = Value(params, q.max);
    uint64_t limit = *base;
    if (per_gib && base_size && size > *base_size) {
      // In 128 bits: base + whole GiB above the base size * rate, saturated.
      unsigned __int128 grown = *base + static_cast<unsigned __int128>((size - *base_size) / kGiB) * *per_gib;
      limit = grown > kMaxLimit ? kMaxLimit : static_cast<uint64_t>(grown);
      if (max && limit > *max) limit = *max;
    }
    out[std::string(kConfPrefix) + q.limit] = std::to_string(limit);
    out[q.saved_base] = std::to_string(*base);
    if (per_gib) out[q.saved_per_gib] = std::to_string(*per_gib);
    if (max) out[q.saved_max] = std::to_string(*max);
  }
  if (base_size && !out.empty()) out[kSavedBaseVolSize] = std::to_string(*base_size);
  return out;
}

std::map<std::string, std::string> SavedQosParameters() {
  std::map<std::string, std::string> out = {{kSavedBaseVolSize, kBaseVolSize}};
  for (const QosLimit& q : kLimits) {
    out[q.saved_base] = q.base;
    out[q.saved_per_gib] = q.per_gib;
    out[q.saved_max] = q.max;
  }
  return out;
}

}  // namespace nbdk
