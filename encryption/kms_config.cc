#include "encryption/kms_config.h"

#include <fcntl.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <unistd.h>

#include <array>
#include <cerrno>

#include "base/quote_field.h"
#include "base/regular_file.h"

namespace nbdk {
namespace {

constexpr std::string_view kTypeKey = "encryptionKMSType";
constexpr std::string_view kLegacyTypeKey = "KMS_PROVIDER";
constexpr std::string_view kSecretNameKey = "secretName";

// ceph-csi's KMS types nbdkeeper does not serve (their UniqueIDs in
// internal/kms/*.go), so that the error can say the type exists.
constexpr std::array<std::string_view, 8> kUnsupportedCephCsiTypes = {
    "vault", "vaulttokens", "vaulttenantsa", "aws-metadata", "aws-sts-metadata", "azure-kv", "ibmkeyprotect", "kmip",
};

std::string_view Text(const rapidjson::Value& v) { return {v.GetString(), v.GetStringLength()}; }

// The member `name`, matched exactly; the last one when it is given twice
// (Go's map decoding). A null is returned as such: ceph-csi refuses it.
const rapidjson::Value* Member(const rapidjson::Value& object, std::string_view name) {
  const rapidjson::Value* found = nullptr;
  for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it) {
    if (Text(it->name) == name) found = &it->value;
  }
  return found;
}

Result<KmsSettings> ParseEntry(const std::string& kms_id, const rapidjson::Value& entry) {
  std::string where = "KMS ID " + QuoteField(kms_id) + ": ";
  if (!entry.IsObject()) return Status::FailedPrecondition(where + "expected an object");
  std::string_view type_key = kTypeKey;
  const rapidjson::Value* type = Member(entry, kTypeKey);
  if (type == nullptr) {
    type_key = kLegacyTypeKey;
    type = Member(entry, kLegacyTypeKey);
  }
  if (type == nullptr) {
    return Status::FailedPrecondition(where + "neither " + std::string(kTypeKey) + " nor " +
                                      std::string(kLegacyTypeKey) + " is set");
  }
  where += std::string(type_key);
  if (!type->IsString()) return Status::FailedPrecondition(where + ": expected a string");
  std::string_view name = Text(*type);
  where += " " + QuoteField(name) + ": ";
  if (name == KmsTypeName(KmsType::kDefault)) return KmsSettings{kms_id, KmsType::kDefault};
  if (name == KmsTypeName(KmsType::kMetadata)) {
    if (Member(entry, kSecretNameKey) != nullptr) {
      return Status::InvalidArgument(
          where + "its " + std::string(kSecretNameKey) +
          " names a Kubernetes Secret to read the encryptionPassphrase from, and nbdkeeper has no Kubernetes API: "
          "put encryptionPassphrase in the StorageClass's secrets and use a metadata KMS entry without " +
          std::string(kSecretNameKey));
    }
    return KmsSettings{kms_id, KmsType::kMetadata};
  }
  for (std::string_view unsupported : kUnsupportedCephCsiTypes) {
    if (name == unsupported) {
      return Status::InvalidArgument(where +
                                     "a ceph-csi KMS type nbdkeeper does not support (it supports default "
                                     "and metadata)");
    }
  }
  return Status::InvalidArgument(where + "not a KMS type ceph-csi knows (nbdkeeper supports default and metadata)");
}

}  // namespace

std::string_view KmsTypeName(KmsType type) {
  switch (type) {
    case KmsType::kDefault:
      return "default";
    case KmsType::kMetadata:
      return "metadata";
  }
  return "unknown";
}

Result<KmsSettings> KmsConfig::Resolve(std::string_view kms_id) const {
  if (kms_id.empty() || kms_id == kDefaultKmsId) return KmsSettings{std::string(kDefaultKmsId), KmsType::kDefault};
  auto found = entries_.find(kms_id);
  if (found == entries_.end()) {
    return Status::FailedPrecondition("KMS ID " + QuoteField(kms_id) + " is not in the KMS config");
  }
  return found->second;
}

Result<KmsConfig> ParseKmsConfig(std::string_view json) {
  if (json.size() > kMaxKmsConfigBytes) {
    return Status::InvalidArgument(std::to_string(json.size()) + " bytes, more than " +
                                   std::to_string(kMaxKmsConfigBytes));
  }
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return Status::InvalidArgument("invalid JSON at offset " + std::to_string(doc.GetErrorOffset()) + ": " +
                                   rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsObject()) return Status::InvalidArgument("top level must be a JSON object keyed by KMS ID");
  KmsConfig config;
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
    std::string kms_id(Text(it->name));
    config.entries_.insert_or_assign(kms_id, ParseEntry(kms_id, it->value));
  }
  return config;
}

Result<KmsSettings> ResolveKms(std::string_view kms_id, const std::string& path) {
  if (kms_id.empty() || kms_id == kDefaultKmsId) return KmsConfig().Resolve(kms_id);
  // The node's configuration, never the request's: FailedPrecondition.
  std::string what = "KMS config " + path;
  // No O_NOFOLLOW: a mounted ConfigMap's file is a symlink into ..data/.
  Result<UniqueFd> fd = OpenRegularFile(path, O_RDONLY);
  if (!fd.ok()) {
    std::string hint = fd.status().code() == Code::kNotFound
                           ? " (nbdkeeper reads only this file: it has no Kubernetes API to read the ConfigMap "
                             "csi-kms-connection-details instead)"
                           : "";
    return Status::FailedPrecondition(what + ": " + fd.status().message() + hint);
  }
  std::string text;
  std::array<char, 16384> buffer;
  while (text.size() <= kMaxKmsConfigBytes) {
    ssize_t n = ::read(fd->get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FailedPrecondition(Status::FromErrno(errno, "read " + what).message());
    if (n == 0) break;
    text.append(buffer.data(), static_cast<size_t>(n));
  }
  auto config = ParseKmsConfig(text);
  if (!config.ok()) return Status::FailedPrecondition(what + ": " + config.status().message());
  return config->Resolve(kms_id);
}

}  // namespace nbdk
