// Which encryption a volume asks for: ceph-csi's encrypted, encryptionType
// and encryptionKMSID, read by the one rule both services share - the
// Controller from CreateVolume's parameters, the Node from NodeStage's
// volume context (the Controller copies the parameters there, as ceph-csi's
// does). Pure.
#pragma once

#include <google/protobuf/map.h>

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace nbdk {

// ceph-csi's encryptionType of LUKS (the only one nbdkeeper serves), as the
// journal records it.
inline constexpr char kBlockEncryptionType[] = "block";

// As ceph-csi reads them (ParseEncryptionOpts, FetchEncryptionKMSID,
// FetchEncryptionType): nullopt when encrypted is absent or false, and then
// the other two are not read, as in ceph-csi; else the KMS ID, "default"
// when encryptionKMSID is absent or empty (encryption/kms_config.h resolves
// it). encryptionType absent is block. InvalidArgument naming the field
// after `where` ("parameters." or "volume_context: "): encrypted not a Go
// boolean; encryptionType present but empty, "file" (fscrypt is not
// supported), or neither block nor file.
Result<std::optional<std::string>> ParseEncryptionKmsId(const google::protobuf::Map<std::string, std::string>& keys,
                                                        std::string_view where);

}  // namespace nbdk
