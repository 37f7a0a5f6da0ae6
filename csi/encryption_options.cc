#include "csi/encryption_options.h"

#include "base/quote_field.h"
#include "base/text_rules.h"
#include "encryption/kms_config.h"

namespace nbdk {

Result<std::optional<std::string>> ParseEncryptionKmsId(const google::protobuf::Map<std::string, std::string>& keys,
                                                        std::string_view where) {
  const std::string at(where);
  auto encrypted = keys.find("encrypted");
  if (encrypted == keys.end()) return std::optional<std::string>();
  std::optional<bool> on = GoBool(encrypted->second);
  if (!on) return Status::InvalidArgument(at + "encrypted: " + QuoteField(encrypted->second) + " is not a boolean");
  if (!*on) return std::optional<std::string>();
  if (auto type = keys.find("encryptionType"); type != keys.end()) {
    const std::string& name = type->second;
    if (name.empty()) return Status::InvalidArgument(at + "encryptionType: empty (block, or absent for block)");
    if (name == "file") {
      return Status::InvalidArgument(at + "encryptionType: 'file': fscrypt not supported (block is: LUKS2)");
    }
    if (name != kBlockEncryptionType) {
      return Status::InvalidArgument(at + "encryptionType: " + QuoteField(name) + " is neither block nor file");
    }
  }
  auto kms = keys.find("encryptionKMSID");
  if (kms == keys.end() || kms->second.empty()) return std::optional<std::string>(std::string(kDefaultKmsId));
  return std::optional<std::string>(kms->second);
}

}  // namespace nbdk
