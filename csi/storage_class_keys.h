// The one list of the keys nbdkeeper knows in a CreateVolume's parameters
// (ceph-csi's RBD StorageClass parameters and nbdkeeper's own) and in a
// NodeStageVolume's volume context, with what each side does with them.
// Both sides check names against it: a key not in it is refused by name,
// except the provisioner's csi.storage.k8s.io/ family. Pure.
//
// Why the Node accepts every StorageClass parameter: ceph-csi's Controller
// returns the StorageClass's parameters (all but topologyConstrainedPools
// and the csi.storage.k8s.io/ family) as the volume context, so a volume it
// made arrives with them; the ones that shaped the image at creation mean
// nothing more at stage. The keys that do mean something at stage
// (csi/node/node_request.h) are read there.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "csi/proto/csi.pb.h"

namespace nbdk {

using KeyValues = google::protobuf::Map<std::string, std::string>;

// ceph-csi's prefix of the provisioner's own parameters: the secrets'
// names, fstype and (with --extra-create-metadata) the PVC/PV names.
inline constexpr char kProvisionerParameterPrefix[] = "csi.storage.k8s.io/";

// What CreateVolume does with a parameter.
enum class ParameterSupport {
  kHonoured,       // read by the Controller's parsers (csi/controller/controller_request.h)
  kFalseOnly,      // a Go boolean; false is what nbdkeeper does anyway, true is refused
  kUnsupported,    // refused whatever its value
  kNotAParameter,  // a volume context key only (the Node's); as a parameter it is unknown
};

struct StorageClassKey {
  std::string_view name;
  ParameterSupport parameter;
  std::string_view why;  // why CreateVolume refuses it
};

// Every key, in no particular order.
std::span<const StorageClassKey> StorageClassKeys();

// The key of that exact name (case matters, as in ceph-csi); nullptr when
// none.
const StorageClassKey* FindStorageClassKey(std::string_view name);

// "<where>.<name>" ("parameters.dataPool"), or "<where> '<quoted>'" for a name that is not short
// printable ASCII (any key is valid in a StorageClass), by base/quote_field.h's rule.
std::string KeyField(std::string_view where, std::string_view name);

// NodeStageVolume: OK when every volume context key is in the list or of the
// csi.storage.k8s.io/ family; otherwise InvalidArgument naming the first
// (in byte order) other one: "volume_context.<key>: not a key nbdkeeper knows".
// Values are not read here.
Status CheckVolumeContextKeys(const KeyValues& context);

}  // namespace nbdk
