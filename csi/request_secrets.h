// The cephx secret both CSI services take from a request's `secrets`
// (userID, userKey), by the rules of ceph/cephx_credentials.h: the one
// reader of those two keys. Messages name the key, never a value.
#pragma once

#include <google/protobuf/map.h>

#include <string>

#include "base/status.h"

namespace nbdk {

struct CephxSecret {
  std::string user_id;   // cephx user, without "client."
  std::string user_key;  // SECRET: only into a key file; never log or print it
};

// InvalidArgument "secrets: userID: ..." or "secrets: userKey: ..." when a
// key is missing or breaks its rule; the key without surrounding whitespace.
Result<CephxSecret> ParseCephxSecret(const google::protobuf::Map<std::string, std::string>& secrets);

}  // namespace nbdk
