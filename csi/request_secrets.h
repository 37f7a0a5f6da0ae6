// The secrets both CSI services take from a request's `secrets`: the cephx
// user (userID, userKey), by the rules of ceph/cephx_credentials.h, and the
// encryptionPassphrase of an encrypted volume. The one reader of those
// keys. Messages name the key, never a value.
#pragma once

#include <google/protobuf/map.h>

#include <string>

#include "base/status.h"
#include "encryption/volume_passphrase.h"

namespace nbdk {

struct CephxSecret {
  std::string user_id;   // cephx user, without "client."
  std::string user_key;  // SECRET: only into a key file; never log or print it
};

// InvalidArgument "secrets: userID: ..." or "secrets: userKey: ..." when a
// key is missing or breaks its rule; the key without surrounding whitespace.
Result<CephxSecret> ParseCephxSecret(const google::protobuf::Map<std::string, std::string>& secrets);

// The secret ceph-csi's default and metadata KMSs read
// (internal/kms/secretskms.go:37): the LUKS passphrase itself (default), or
// what the volume's passphrase is wrapped under (metadata). Every byte
// counts, whitespace included. Empty when the key is absent or empty: the
// caller that needs it says so. The request's own copy is the caller's.
SecretBytes ReadEncryptionPassphrase(const google::protobuf::Map<std::string, std::string>& secrets);

}  // namespace nbdk
