#include "csi/request_secrets.h"

#include "ceph/cephx_credentials.h"

namespace nbdk {

Result<CephxSecret> ParseCephxSecret(const google::protobuf::Map<std::string, std::string>& secrets) {
  auto id = secrets.find("userID");
  CephxSecret out;
  out.user_id = id == secrets.end() ? "" : id->second;
  NBDK_RETURN_IF_ERROR(CheckCephxUserId("secrets: userID", out.user_id));
  auto key = secrets.find("userKey");
  auto parsed = ParseCephxKey("secrets: userKey", key == secrets.end() ? "" : key->second);
  if (!parsed.ok()) return parsed.status();
  out.user_key = std::move(*parsed);
  return out;
}

SecretBytes ReadEncryptionPassphrase(const google::protobuf::Map<std::string, std::string>& secrets) {
  auto it = secrets.find("encryptionPassphrase");
  return it == secrets.end() ? SecretBytes() : SecretBytes::CopyOf(it->second);
}

}  // namespace nbdk
