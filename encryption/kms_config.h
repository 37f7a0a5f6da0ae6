// Which KMS a volume's encryptionKMSID names, read from ceph-csi's KMS
// configuration, and the allow-list of the KMS types nbdkeeper serves.
//
// As ceph-csi reads it (internal/kms/kms.go):
//  - an empty encryptionKMSID, or "default", is the built-in secrets KMS,
//    chosen without reading the file (GetKMS, :70-72; util/crypto.go:76-78):
//    the LUKS passphrase is the StorageClass secret's encryptionPassphrase
//    itself (secretskms.go:66-83: its DEK store is integrated, it stores
//    nothing and fetches the secret);
//  - otherwise the file /etc/ceph-csi-encryption-kms-config/config.json
//    (:51) is a JSON object keyed by KMS ID (:79-84); ceph-csi falls back to
//    reading the ConfigMap csi-kms-connection-details through the
//    Kubernetes API when the file is missing (:110-123), which nbdkeeper
//    cannot do: a missing file is an error saying so;
//  - an entry's type is its "encryptionKMSType", else the legacy
//    "KMS_PROVIDER" (:31-38, getProvider :192-219; both names exact, as Go
//    map keys are). The "KMS_ID" naming does not exist in ceph-csi;
//  - only the requested entry is read: another entry's problems (a vault
//    entry, nested "tenants" objects) do not matter (:80-93). A key given
//    twice counts as its last value, as Go's map decoding has it.
//
// Types served: "default" (above) and "metadata" (secretskms.go:41, the
// passphrase wrapped into the image metadata: encryption/key_wrap.h) with
// the encryptionPassphrase from the request's secrets. A metadata entry
// naming a Kubernetes Secret to read it from ("secretName", with an optional
// "secretNamespace", :43-48, :148-161: a present secretName of any value
// makes ceph-csi read the Secret) is refused: nbdkeeper has no Kubernetes
// API. Every other type is refused by name: ceph-csi's vault, vaulttokens,
// vaulttenantsa, aws-metadata, aws-sts-metadata, azure-kv, ibmkeyprotect
// and kmip (the "kp-metadata" is ceph-csi's "ibmkeyprotect"), and
// any string ceph-csi does not know.
//
// Pure functions but ResolveKms, which reads the file (blocking: call it in
// EventLoop::RunBlocking). The file is a ConfigMap that may change while
// the daemon runs: callers read it per request, as ceph-csi does.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "base/status.h"

namespace nbdk {

enum class KmsType {
  kDefault,   // the passphrase is the secret's encryptionPassphrase
  kMetadata,  // a random passphrase, wrapped into rbd.csi.ceph.com/dek
};
// "default", "metadata": ceph-csi's names.
std::string_view KmsTypeName(KmsType type);

struct KmsSettings {
  std::string kms_id;  // "default" for an empty encryptionKMSID
  KmsType type;

  bool operator==(const KmsSettings&) const = default;
};

inline constexpr std::string_view kKmsConfigPath = "/etc/ceph-csi-encryption-kms-config/config.json";
inline constexpr std::string_view kDefaultKmsId = "default";
// A ConfigMap holds at most 1 MiB.
inline constexpr size_t kMaxKmsConfigBytes = size_t{1} << 20;

class KmsConfig {
 public:
  // The KMS `kms_id` names; "" and "default" are the built-in one whatever
  // the file says. Errors name the KMS ID and the field:
  //  - InvalidArgument for a type nbdkeeper does not serve: "KMS ID 'v':
  //    encryptionKMSType 'vault': a ceph-csi KMS type nbdkeeper does not
  //    support (it supports default and metadata)", an unknown type, or a
  //    metadata entry with secretName (the message says to put
  //    encryptionPassphrase in the StorageClass's secrets instead);
  //  - FailedPrecondition for the node's configuration: an ID the file
  //    lacks, an entry that is not an object, a missing or non-string type.
  Result<KmsSettings> Resolve(std::string_view kms_id) const;

 private:
  friend Result<KmsConfig> ParseKmsConfig(std::string_view json);

  // Each entry read at parse time; kept as its error when it has one, so
  // that only a request for that ID fails.
  std::map<std::string, Result<KmsSettings>, std::less<>> entries_;
};

// The file's text. InvalidArgument when it is larger than
// kMaxKmsConfigBytes, is not JSON, or is not a JSON object.
Result<KmsConfig> ParseKmsConfig(std::string_view json);

// Resolve(kms_id) on the file at `path` (kKmsConfigPath in production),
// which is read only when kms_id is neither "" nor "default". A file that
// is missing, unreadable or does not parse is FailedPrecondition naming the
// path.
Result<KmsSettings> ResolveKms(std::string_view kms_id, const std::string& path);

}  // namespace nbdk
