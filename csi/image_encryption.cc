#include "csi/image_encryption.h"

#include <algorithm>
#include <string_view>

#include "base/quote_field.h"
#include "encryption/key_wrap.h"

namespace nbdk {

Result<std::optional<std::string>> GetEitherKey(ImageMetadata& metadata, const std::string& image,
                                                const std::string& key, const std::string& legacy_key) {
  auto value = metadata.Get(image, key);
  if (!value.ok() || *value) return value;
  return metadata.Get(image, legacy_key);
}

Result<std::optional<std::string>> ReadEncryptionState(ImageMetadata& metadata, const std::string& image) {
  auto state = GetEitherKey(metadata, image, kEncryptionStateKey, kLegacyEncryptionStateKey);
  if (!state.ok() || !*state) return state;
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  std::string_view value = **state;
  value.remove_prefix(std::min(value.find_first_not_of(kSpace), value.size()));
  value.remove_suffix(value.size() - std::min(value.find_last_not_of(kSpace) + 1, value.size()));
  return std::optional<std::string>(std::string(value));
}

Result<SecretBytes> ReadVolumePassphrase(ImageMetadata& metadata, const std::string& image, const std::string& id,
                                         KmsType kms, const SecretBytes& encryption_passphrase) {
  if (kms == KmsType::kDefault) return SecretBytes::CopyOf(encryption_passphrase.Reveal());
  const std::string what = QuoteField(id) + ": image " + image;
  auto stored = GetEitherKey(metadata, image, std::string(kWrappedKeyMetadataKey), kLegacyWrappedKeyMetadataKey);
  if (!stored.ok()) return stored.status();
  if (!*stored) {
    return Status::FailedPrecondition(what + ": no " + std::string(kWrappedKeyMetadataKey) +
                                      ", though its KMS keeps the key there");
  }
  auto passphrase = UnwrapVolumePassphrase(**stored, encryption_passphrase, id);
  if (!passphrase.ok()) return passphrase.status().WithContext(what);
  return passphrase;
}

}  // namespace nbdk
