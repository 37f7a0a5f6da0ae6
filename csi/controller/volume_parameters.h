// CreateVolume's StorageClass parameters by name, checked against the one
// list of those nbdkeeper knows (csi/storage_class_keys.h: ceph-csi's RBD
// StorageClass parameters and its own nbdkeeper.io/imageName, which of them
// it refuses and why), and the readers of the image's layout and metadata. csi/controller/controller_request.h
// says what each parameter does. Pure.
//
// Every parameter is honoured or refused by name, never dropped: a
// StorageClass written for ceph-csi either gets what it says or a
// CreateVolume error naming what it cannot get.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "ceph/rbd_image.h"
#include "csi/encryption_options.h"
#include "csi/proto/csi.pb.h"
#include "csi/storage_class_keys.h"

namespace nbdk {

using VolumeParameters = google::protobuf::Map<std::string, std::string>;

inline constexpr char kDefaultImageFeatures[] = "layering,exclusive-lock,object-map,fast-diff";

// ceph-csi's image metadata keys for the PVC/PV names; the provisioner
// passes the same keys as parameters.
inline constexpr char kPvcNameKey[] = "csi.storage.k8s.io/pvc/name";
inline constexpr char kPvcNamespaceKey[] = "csi.storage.k8s.io/pvc/namespace";
inline constexpr char kPvNameKey[] = "csi.storage.k8s.io/pv/name";

// OK when every parameter is one nbdkeeper honours or of the
// csi.storage.k8s.io/ family. Otherwise InvalidArgument naming the first
// other one: "parameters.<name>: not a parameter nbdkeeper knows", or, for a
// ceph-csi parameter nbdkeeper does not implement, "...: not supported" and
// why. The boolean ones nbdkeeper does not implement (thickProvision,
// tryOtherMounters) are refused only when true, as Go's strconv.ParseBool
// reads them.
Status CheckParameterNames(const VolumeParameters& params);

// "layering,exclusive-lock" -> RBD_FEATURE_* bits; the field is named
// "parameters.imageFeatures" in errors. An empty list is no features.
// Every feature ceph-csi accepts, each one the librbd loaded at run time
// knows (rbd_features_from_string); what the cluster cannot make is
// refused by rbd_create (ceph/rbd_image.h ImageCreateFailure).
// librbd's dependencies are checked: object-map needs exclusive-lock,
// fast-diff needs object-map, journaling needs exclusive-lock.
Result<uint64_t> ParseImageFeatures(std::string_view csv);

// The parameter `name` as Go's strconv.ParseUint(v, 10, 64) reads it
// (decimal digits only); nullopt when absent. InvalidArgument
// "parameters.<name>: '<v>' is not a decimal number of <unit>".
Result<std::optional<uint64_t>> DecimalParameter(const VolumeParameters& params, std::string_view name,
                                                 std::string_view unit);

// imageFeatures (default kDefaultImageFeatures; present but empty is
// InvalidArgument, as in ceph-csi), dataPool, objectSize,
// stripeUnit and stripeCount as librbd's creation options, each checked so
// that librbd accepts the combination: objectSize a power of two from
// 4 KiB to 32 MiB (librbd's orders 12 to 25); stripeUnit and stripeCount
// together (as ceph-csi asks), stripeUnit a power of two from 4 KiB up to
// the object size (librbd's default 4 MiB when objectSize is absent),
// stripeCount at least 1; numbers in decimal.
Result<ImageCreateOptions> ParseImageLayout(const VolumeParameters& params);

// The image metadata ceph-csi writes: each of the PVC name, the PVC
// namespace and the PV name that the parameters hold, under the same key.
std::map<std::string, std::string> VolumeMetadataOf(const VolumeParameters& params);

}  // namespace nbdk
