#include "csi/storage_class_keys.h"

#include <algorithm>
#include <map>

#include "base/quote_field.h"

namespace nbdk {
namespace {

using enum ParameterSupport;

constexpr std::string_view kLogsAreTheNodes = "rbd-nbd's logs are the node daemon's (<state dir>/logs)";

constexpr StorageClassKey kKeys[] = {
    {"clusterID", kHonoured, ""},
    {"pool", kHonoured, ""},
    {"journalPool", kHonoured, ""},
    {"radosNamespace", kHonoured, ""},
    {"dataPool", kHonoured, ""},
    {"imageFeatures", kHonoured, ""},
    {"objectSize", kHonoured, ""},
    {"stripeUnit", kHonoured, ""},
    {"stripeCount", kHonoured, ""},
    {"volumeNamePrefix", kHonoured, ""},
    {"mounter", kHonoured, ""},
    {"mapOptions", kHonoured, ""},
    {"unmapOptions", kHonoured, ""},
    {"mkfsOptions", kHonoured, ""},
    {"nbdkeeper.io/imageName", kHonoured, ""},
    {"encrypted", kHonoured, ""},
    {"encryptionType", kHonoured, ""},
    {"encryptionKMSID", kHonoured, ""},
    {"thickProvision", kFalseOnly, "thick provisioning is not supported"},
    {"tryOtherMounters", kFalseOnly, "rbd-nbd is the only mounter, there is no other to try"},
    {"topologyConstrainedPools", kHonoured, ""},
    // nbdkeeper keeps each volume's rbd-nbd output in its own log
    // (<state dir>/logs/<volume>.log), whatever ceph-csi would do.
    {"cephLogDir", kUnsupported, kLogsAreTheNodes},
    {"cephLogStrategy", kUnsupported, kLogsAreTheNodes},
    {"snapshotNamePrefix", kUnsupported, "snapshot images are always named csi-snap-<uuid>"},
    // ceph-csi's rbd-nbd QoS (internal/rbd/qos.go): librbd's per-image limits
    // (csi/controller/volume_qos.h).
    {"baseIops", kHonoured, ""},
    {"maxIops", kHonoured, ""},
    {"iopsPerGiB", kHonoured, ""},
    {"baseReadIops", kHonoured, ""},
    {"maxReadIops", kHonoured, ""},
    {"readIopsPerGiB", kHonoured, ""},
    {"baseWriteIops", kHonoured, ""},
    {"maxWriteIops", kHonoured, ""},
    {"writeIopsPerGiB", kHonoured, ""},
    {"baseBps", kHonoured, ""},
    {"maxBps", kHonoured, ""},
    {"bpsPerGiB", kHonoured, ""},
    {"baseReadBps", kHonoured, ""},
    {"maxReadBps", kHonoured, ""},
    {"readBpsPerGiB", kHonoured, ""},
    {"baseWriteBps", kHonoured, ""},
    {"maxWriteBps", kHonoured, ""},
    {"writeBpsPerGiB", kHonoured, ""},
    {"baseVolSizeBytes", kHonoured, ""},
    // The volume context keys ceph-csi's Controller adds (imageName) and the
    // one a static PersistentVolume sets (staticVolume).
    {"imageName", kNotAParameter, ""},
    {"staticVolume", kNotAParameter, ""},
    // nbdkeeper's own: the snapshot of the image to map read-only, as
    // `nbdkeeperctl map POOL/IMAGE@SNAP` stages it.
    {"imageSnapshot", kNotAParameter, ""},
};

}  // namespace

std::span<const StorageClassKey> StorageClassKeys() { return kKeys; }

const StorageClassKey* FindStorageClassKey(std::string_view name) {
  auto it =
      std::find_if(std::begin(kKeys), std::end(kKeys), [name](const StorageClassKey& k) { return k.name == name; });
  return it == std::end(kKeys) ? nullptr : &*it;
}

std::string KeyField(std::string_view where, std::string_view name) {
  bool plain = !name.empty() && name.size() <= kMaxQuotedBytes &&
               std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c < 0x7f; });
  return std::string(where) + (plain ? "." + std::string(name) : " " + QuoteField(name));
}

Status CheckVolumeContextKeys(const KeyValues& context) {
  // Sorted, so that the first offender named is the same on every call.
  std::map<std::string_view, std::string_view> sorted(context.begin(), context.end());
  for (const auto& [name, value] : sorted) {
    if (name.starts_with(kProvisionerParameterPrefix) || FindStorageClassKey(name) != nullptr) continue;
    return Status::InvalidArgument(KeyField("volume_context", name) +
                                   ": not a key nbdkeeper knows (ceph-csi's volume context keys, its RBD "
                                   "StorageClass parameters and csi.storage.k8s.io/... are)");
  }
  return Status::Ok();
}

}  // namespace nbdk
