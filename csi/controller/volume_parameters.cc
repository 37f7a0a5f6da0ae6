#include "csi/controller/volume_parameters.h"

#include <rbd/features.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>

#include "base/quote_field.h"
#include "base/text_rules.h"
#include "ceph/image_spec.h"

namespace nbdk {
namespace {

// What nbdkeeper does with a parameter it knows.
enum class Support {
  kHonoured,     // read by ParseCreateVolumeRequest (the encryption ones by ParseEncryptionKmsId)
  kFalseOnly,    // a Go boolean; false is what nbdkeeper does anyway, true is refused
  kUnsupported,  // refused whatever its value
};

struct KnownParameter {
  std::string_view name;
  Support support;
  std::string_view why;  // why nbdkeeper refuses it
};

constexpr std::string_view kNoQos = "QoS limits are not supported";

constexpr KnownParameter kKnownParameters[] = {
    {"clusterID", Support::kHonoured, ""},
    {"pool", Support::kHonoured, ""},
    {"journalPool", Support::kHonoured, ""},
    {"radosNamespace", Support::kHonoured, ""},
    {"dataPool", Support::kHonoured, ""},
    {"imageFeatures", Support::kHonoured, ""},
    {"objectSize", Support::kHonoured, ""},
    {"stripeUnit", Support::kHonoured, ""},
    {"stripeCount", Support::kHonoured, ""},
    {"volumeNamePrefix", Support::kHonoured, ""},
    {"mounter", Support::kHonoured, ""},
    {"mapOptions", Support::kHonoured, ""},
    {"unmapOptions", Support::kHonoured, ""},
    {"nbdkeeper.io/imageName", Support::kHonoured, ""},
    {"encrypted", Support::kHonoured, ""},
    {"encryptionType", Support::kHonoured, ""},
    {"encryptionKMSID", Support::kHonoured, ""},
    {"thickProvision", Support::kFalseOnly, "thick provisioning is not supported"},
    {"tryOtherMounters", Support::kFalseOnly, "rbd-nbd is the only mounter, there is no other to try"},
    {"topologyConstrainedPools", Support::kUnsupported, "topology is not supported yet"},
    {"mkfsOptions", Support::kUnsupported, "the node's mkfs takes no options yet"},
    // nbdkeeper keeps each volume's rbd-nbd output in its own log
    // (<state dir>/logs/<volume>.log), whatever ceph-csi would do.
    {"cephLogDir", Support::kUnsupported, "rbd-nbd's logs are the node daemon's (<state dir>/logs)"},
    {"cephLogStrategy", Support::kUnsupported, "rbd-nbd's logs are the node daemon's (<state dir>/logs)"},
    {"snapshotNamePrefix", Support::kUnsupported, "snapshot images are always named csi-snap-<uuid>"},
    // ceph-csi's QoS proposal (docs/design/proposals/rbd-qos.md).
    {"MaxReadIOPS", Support::kUnsupported, kNoQos},
    {"MaxWriteIOPS", Support::kUnsupported, kNoQos},
    {"MaxReadBytesPerSecond", Support::kUnsupported, kNoQos},
    {"MaxWriteBytesPerSecond", Support::kUnsupported, kNoQos},
};

constexpr uint64_t kMinObjectSize = uint64_t{1} << 12;      // librbd's smallest order
constexpr uint64_t kMaxObjectSize = uint64_t{1} << 25;      // and largest
constexpr uint64_t kDefaultObjectSize = uint64_t{1} << 22;  // librbd's default order, 22

// "parameters.<name>"; a name that is not short printable ASCII (any key
// is a valid StorageClass parameter) is quoted instead, by base/quote_field.h's rule.
std::string Field(std::string_view name) {
  bool plain = !name.empty() && name.size() <= kMaxQuotedBytes &&
               std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c < 0x7f; });
  return plain ? "parameters." + std::string(name) : "parameters " + QuoteField(name);
}

// A decimal number as Go's strconv.ParseUint(v, 10, 64) reads it; nullopt
// when absent.
Result<std::optional<uint64_t>> Number(const VolumeParameters& params, const char* name) {
  auto it = params.find(name);
  if (it == params.end()) return std::optional<uint64_t>();
  const std::string& v = it->second;
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || !std::isdigit(static_cast<unsigned char>(v.front())) || ec != std::errc() ||
      end != v.data() + v.size()) {
    return Status::InvalidArgument(Field(name) + ": " + QuoteField(v) + " is not a decimal number of bytes");
  }
  return std::optional<uint64_t>(n);
}

}  // namespace

Status CheckParameterNames(const VolumeParameters& params) {
  // Sorted, so that the first offender named is the same on every call.
  std::map<std::string_view, std::string_view> sorted(params.begin(), params.end());
  for (const auto& [name, value] : sorted) {
    if (name.starts_with(kProvisionerParameterPrefix)) continue;
    const KnownParameter* known = nullptr;
    for (const KnownParameter& k : kKnownParameters) {
      if (k.name == name) known = &k;
    }
    if (known == nullptr) {
      return Status::InvalidArgument(Field(name) +
                                     ": not a parameter nbdkeeper knows (ceph-csi's RBD StorageClass "
                                     "parameters, csi.storage.k8s.io/... and nbdkeeper.io/imageName are)");
    }
    if (known->support == Support::kHonoured) continue;
    if (known->support == Support::kFalseOnly) {
      std::optional<bool> b = GoBool(value);
      if (!b) return Status::InvalidArgument(Field(name) + ": " + QuoteField(value) + " is not a boolean");
      if (!*b) continue;
    }
    return Status::InvalidArgument(Field(name) + ": not supported: " + std::string(known->why));
  }
  return Status::Ok();
}

Result<uint64_t> ParseImageFeatures(std::string_view csv) {
  static const std::map<std::string_view, uint64_t> kFeatures = {
      {RBD_FEATURE_NAME_LAYERING, RBD_FEATURE_LAYERING},
      {RBD_FEATURE_NAME_EXCLUSIVE_LOCK, RBD_FEATURE_EXCLUSIVE_LOCK},
      {RBD_FEATURE_NAME_OBJECT_MAP, RBD_FEATURE_OBJECT_MAP},
      {RBD_FEATURE_NAME_FAST_DIFF, RBD_FEATURE_FAST_DIFF},
      {RBD_FEATURE_NAME_DEEP_FLATTEN, RBD_FEATURE_DEEP_FLATTEN},
      {RBD_FEATURE_NAME_JOURNALING, RBD_FEATURE_JOURNALING},
  };
  uint64_t bits = 0;
  while (!csv.empty()) {
    size_t comma = csv.find(',');
    std::string_view name = csv.substr(0, comma);
    csv = comma == std::string_view::npos ? std::string_view() : csv.substr(comma + 1);
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.front()))) name.remove_prefix(1);
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.remove_suffix(1);
    if (name.empty()) continue;
    auto it = kFeatures.find(name);
    if (it == kFeatures.end()) {
      return Status::InvalidArgument("parameters.imageFeatures: unknown or unsupported feature " + QuoteField(name));
    }
    bits |= it->second;
  }
  auto requires_feature = [&](uint64_t f, uint64_t needed, const char* f_name, const char* needed_name) {
    if ((bits & f) && !(bits & needed)) {
      return Status::InvalidArgument(std::string("parameters.imageFeatures: ") + f_name + " requires " + needed_name);
    }
    return Status::Ok();
  };
  NBDK_RETURN_IF_ERROR(requires_feature(RBD_FEATURE_OBJECT_MAP, RBD_FEATURE_EXCLUSIVE_LOCK, "object-map",
                                        "exclusive-lock"));
  NBDK_RETURN_IF_ERROR(requires_feature(RBD_FEATURE_FAST_DIFF, RBD_FEATURE_OBJECT_MAP, "fast-diff", "object-map"));
  NBDK_RETURN_IF_ERROR(requires_feature(RBD_FEATURE_JOURNALING, RBD_FEATURE_EXCLUSIVE_LOCK, "journaling",
                                        "exclusive-lock"));
  return bits;
}

Result<ImageCreateOptions> ParseImageLayout(const VolumeParameters& params) {
  ImageCreateOptions out;
  auto features = params.contains("imageFeatures") ? ParseImageFeatures(params.at("imageFeatures"))
                                                   : ParseImageFeatures(kDefaultImageFeatures);
  if (!features.ok()) return features.status();
  out.features = *features;
  if (auto it = params.find("dataPool"); it != params.end()) {
    NBDK_RETURN_IF_ERROR(CheckCephName("parameters.dataPool", it->second, true));
    out.data_pool = it->second;
  }
  auto object_size = Number(params, "objectSize");
  auto stripe_unit = Number(params, "stripeUnit");
  auto stripe_count = Number(params, "stripeCount");
  for (const auto* n : {&object_size, &stripe_unit, &stripe_count}) {
    if (!n->ok()) return n->status();
  }
  if (*object_size) {
    uint64_t size = **object_size;
    if (!std::has_single_bit(size) || size < kMinObjectSize || size > kMaxObjectSize) {
      return Status::InvalidArgument("parameters.objectSize: " + std::to_string(size) +
                                     " is not a power of two from 4096 (4 KiB) to 33554432 (32 MiB)");
    }
    out.object_size = size;
  }
  if (stripe_unit->has_value() != stripe_count->has_value()) {
    return Status::InvalidArgument(*stripe_unit ? "parameters.stripeCount: missing; stripeUnit needs it"
                                                : "parameters.stripeUnit: missing; stripeCount needs it");
  }
  if (*stripe_unit) {
    const uint64_t unit = **stripe_unit, object = out.object_size ? out.object_size : kDefaultObjectSize;
    // librbd splits each object into whole stripe units.
    if (!std::has_single_bit(unit) || unit < kMinObjectSize || unit > object) {
      return Status::InvalidArgument("parameters.stripeUnit: " + std::to_string(unit) +
                                     " is not a power of two from 4096 (4 KiB) to the object size (" +
                                     std::to_string(object) + ")");
    }
    if (**stripe_count == 0) return Status::InvalidArgument("parameters.stripeCount: must be at least 1");
    out.stripe_unit = unit;
    out.stripe_count = **stripe_count;
  }
  return out;
}

std::map<std::string, std::string> VolumeMetadataOf(const VolumeParameters& params) {
  std::map<std::string, std::string> out;
  for (const char* key : {kPvcNameKey, kPvcNamespaceKey, kPvNameKey}) {
    if (auto it = params.find(key); it != params.end()) out[key] = it->second;
  }
  return out;
}

}  // namespace nbdk
