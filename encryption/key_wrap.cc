#include "encryption/key_wrap.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <strings.h>

#include <cstring>
#include <memory>

#include "base/json_writer.h"
#include "encryption/base64.h"

namespace nbdk {
namespace {

// ceph-csi's scrypt parameters (secretskms.go:274) and the AES-256 key size.
constexpr uint64_t kScryptN = 32768;
constexpr uint32_t kScryptR = 8;
constexpr uint32_t kScryptP = 1;
constexpr size_t kKeyBytes = 32;
// scrypt needs 128 * r * (N + 2) + 128 * r * p bytes, just over 32 MiB,
// which is exactly OpenSSL's default limit: without a higher one it refuses.
constexpr uint64_t kScryptMaxMemory = uint64_t{64} << 20;

using KdfPtr = std::unique_ptr<EVP_KDF, decltype(&EVP_KDF_free)>;
using KdfCtxPtr = std::unique_ptr<EVP_KDF_CTX, decltype(&EVP_KDF_CTX_free)>;
using CipherCtxPtr = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

unsigned char* Bytes(char* p) { return reinterpret_cast<unsigned char*>(p); }
const unsigned char* Bytes(const char* p) { return reinterpret_cast<const unsigned char*>(p); }

// OpenSSL's reason for the last failure on this thread; its queue is
// emptied so that a later call does not report this one.
Status OpenSslFailure(std::string_view what) {
  char reason[256] = "no reason given";
  if (unsigned long code = ERR_peek_last_error()) ERR_error_string_n(code, reason, sizeof reason);
  ERR_clear_error();
  return Status::Internal(std::string(what) + " failed: " + reason);
}

Result<SecretBytes> DeriveKey(const SecretBytes& encryption_passphrase, std::string_view volume_id) {
  KdfPtr kdf(EVP_KDF_fetch(nullptr, OSSL_KDF_NAME_SCRYPT, nullptr), EVP_KDF_free);
  if (!kdf) return OpenSslFailure("scrypt: EVP_KDF_fetch");
  KdfCtxPtr ctx(EVP_KDF_CTX_new(kdf.get()), EVP_KDF_CTX_free);
  if (!ctx) return OpenSslFailure("scrypt: EVP_KDF_CTX_new");
  // OSSL_PARAM takes non-const pointers but only reads them here.
  static char empty[1] = "";
  char* password = encryption_passphrase.empty() ? empty : const_cast<char*>(encryption_passphrase.data());
  uint64_t n = kScryptN;
  uint32_t r = kScryptR, p = kScryptP;
  uint64_t max_memory = kScryptMaxMemory;
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_PASSWORD, password, encryption_passphrase.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<char*>(volume_id.data()), volume_id.size()),
      OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_N, &n),
      OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_R, &r),
      OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_P, &p),
      OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_MAXMEM, &max_memory),
      OSSL_PARAM_construct_end(),
  };
  SecretBytes key = SecretBytes::Zeroed(kKeyBytes);
  if (EVP_KDF_derive(ctx.get(), Bytes(key.data()), key.size(), params) != 1) return OpenSslFailure("scrypt");
  return key;
}

// A new AES-256-GCM context for `key` and `nonce`, encrypting or decrypting.
Result<CipherCtxPtr> GcmContext(const SecretBytes& key, std::string_view nonce, bool encrypt) {
  CipherCtxPtr ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  if (!ctx) return OpenSslFailure("AES-GCM: EVP_CIPHER_CTX_new");
  if (EVP_CipherInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr, encrypt ? 1 : 0) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(nonce.size()), nullptr) != 1 ||
      EVP_CipherInit_ex(ctx.get(), nullptr, nullptr, Bytes(key.data()), Bytes(nonce.data()), encrypt ? 1 : 0) != 1) {
    return OpenSslFailure("AES-GCM: init");
  }
  return ctx;
}

// The member `name` as Go's encoding/json finds a struct field: any case,
// the last one wins, null counts as absent.
const rapidjson::Value* Field(const rapidjson::Value& object, const char* name) {
  const rapidjson::Value* found = nullptr;
  for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it) {
    std::string_view key(it->name.GetString(), it->name.GetStringLength());
    if (key.size() == std::strlen(name) && ::strncasecmp(key.data(), name, key.size()) == 0) {
      found = it->value.IsNull() ? nullptr : &it->value;
    }
  }
  return found;
}

Result<std::string> Base64Field(const rapidjson::Value& object, const char* name) {
  const rapidjson::Value* value = Field(object, name);
  if (value == nullptr) return Status::Corruption(std::string(name) + ": missing");
  if (!value->IsString()) return Status::Corruption(std::string(name) + ": expected a base64 string");
  auto bytes = DecodeBase64Standard({value->GetString(), value->GetStringLength()});
  if (!bytes.ok()) return Status::Corruption(std::string(name) + ": " + bytes.status().message());
  return bytes;
}

std::span<const uint8_t> Span(std::string_view bytes) { return {Bytes(bytes.data()), bytes.size()}; }

}  // namespace

Result<WrappedKey> ParseWrappedKey(std::string_view json) {
  const std::string where = "wrapped key: ";
  if (json.size() > kMaxWrappedKeyJsonBytes) {
    return Status::Corruption(where + std::to_string(json.size()) + " bytes, more than " +
                              std::to_string(kMaxWrappedKeyJsonBytes));
  }
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return Status::Corruption(where + "invalid JSON at offset " + std::to_string(doc.GetErrorOffset()) + ": " +
                              rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsObject()) return Status::Corruption(where + "expected a JSON object with dek and nonce");
  auto sealed = Base64Field(doc, "dek");
  if (!sealed.ok()) return sealed.status().WithContext("wrapped key");
  auto nonce = Base64Field(doc, "nonce");
  if (!nonce.ok()) return nonce.status().WithContext("wrapped key");
  if (nonce->size() != kWrapNonceBytes) {
    return Status::Corruption(where + "nonce: " + std::to_string(nonce->size()) + " bytes, not " +
                              std::to_string(kWrapNonceBytes));
  }
  if (sealed->size() < kWrapTagBytes) {
    return Status::Corruption(where + "dek: " + std::to_string(sealed->size()) + " bytes, shorter than its " +
                              std::to_string(kWrapTagBytes) + "-byte GCM tag");
  }
  return WrappedKey{std::move(sealed).value(), std::move(nonce).value()};
}

std::string EncodeWrappedKey(const WrappedKey& key) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  WriteJsonMember(w, "dek", EncodeBase64(Span(key.sealed), Base64Alphabet::kStandard));
  WriteJsonMember(w, "nonce", EncodeBase64(Span(key.nonce), Base64Alphabet::kStandard));
  w.EndObject();
  return JsonText(buffer);
}

Result<std::string> WrapVolumePassphrase(const SecretBytes& passphrase, const SecretBytes& encryption_passphrase,
                                         std::string_view volume_id) {
  if (volume_id.empty()) return Status::InvalidArgument("wrap a volume passphrase: the volume ID is empty");
  if (passphrase.size() > kMaxWrappablePassphraseBytes) {
    return Status::InvalidArgument("wrap a volume passphrase: " + std::to_string(passphrase.size()) +
                                   " bytes, more than " + std::to_string(kMaxWrappablePassphraseBytes));
  }
  auto key = DeriveKey(encryption_passphrase, volume_id);
  if (!key.ok()) return key.status();
  WrappedKey wrapped;
  wrapped.nonce.resize(kWrapNonceBytes);
  if (RAND_bytes(Bytes(wrapped.nonce.data()), static_cast<int>(kWrapNonceBytes)) != 1) {
    return OpenSslFailure("RAND_bytes for the nonce");
  }
  auto ctx = GcmContext(*key, wrapped.nonce, true);
  if (!ctx.ok()) return ctx.status();
  wrapped.sealed.resize(passphrase.size() + kWrapTagBytes);
  int written = 0, last = 0;
  static const char kNothing = 0;  // EncryptUpdate wants a pointer even for no bytes
  const char* plain = passphrase.empty() ? &kNothing : passphrase.data();
  if (EVP_EncryptUpdate(ctx->get(), Bytes(wrapped.sealed.data()), &written, Bytes(plain),
                        static_cast<int>(passphrase.size())) != 1 ||
      EVP_EncryptFinal_ex(ctx->get(), Bytes(wrapped.sealed.data()) + written, &last) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx->get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(kWrapTagBytes),
                          wrapped.sealed.data() + passphrase.size()) != 1) {
    return OpenSslFailure("AES-GCM seal");
  }
  return EncodeWrappedKey(wrapped);
}

Result<SecretBytes> UnwrapVolumePassphrase(std::string_view json, const SecretBytes& encryption_passphrase,
                                           std::string_view volume_id) {
  if (volume_id.empty()) return Status::InvalidArgument("unwrap a volume passphrase: the volume ID is empty");
  auto wrapped = ParseWrappedKey(json);
  if (!wrapped.ok()) return wrapped.status();
  auto key = DeriveKey(encryption_passphrase, volume_id);
  if (!key.ok()) return key.status();
  auto ctx = GcmContext(*key, wrapped->nonce, false);
  if (!ctx.ok()) return ctx.status();
  size_t plain_size = wrapped->sealed.size() - kWrapTagBytes;
  SecretBytes plain = SecretBytes::Zeroed(plain_size);
  int written = 0, last = 0;
  char* tag = wrapped->sealed.data() + plain_size;
  if (EVP_DecryptUpdate(ctx->get(), Bytes(plain.data()), &written, Bytes(wrapped->sealed.data()),
                        static_cast<int>(plain_size)) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx->get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(kWrapTagBytes), tag) != 1) {
    return OpenSslFailure("AES-GCM open");
  }
  if (EVP_DecryptFinal_ex(ctx->get(), Bytes(plain.data()) + written, &last) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument(
        "wrapped key: authentication failed: the encryptionPassphrase or the volume ID is not the one the key "
        "was wrapped with, or the stored key was altered");
  }
  return plain;
}

}  // namespace nbdk
