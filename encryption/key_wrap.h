// ceph-csi's "metadata" KMS: a volume's passphrase (its DEK) wrapped under a
// key made from the StorageClass secret's encryptionPassphrase and the CSI
// volume ID, kept as JSON in the image metadata rbd.csi.ceph.com/dek.
//
// The format, read in ceph-csi's internal/kms/secretskms.go:
//  - key: scrypt(password = encryptionPassphrase, salt = the volume ID,
//    N=32768, r=8, p=1, 32 bytes) (generateCipher, :273-275);
//  - AES-256 (32-byte key) in GCM with Go's defaults (:278-282): a 12-byte
//    nonce (aead.NonceSize(), :222) from crypto/rand, a 16-byte tag, no
//    additional data (:226, :258);
//  - "dek" is Go's aead.Seal output: the ciphertext with the tag appended
//    (the issue does not say so);
//  - the text is encoding/json's Marshal of {DEK []byte `json:"dek"`,
//    Nonce []byte `json:"nonce"`} (:197-203, :228): compact, "dek" first,
//    each []byte in *standard* padded base64 (encoding/json's rule for
//    []byte; not the URL flavour of the passphrase). The issue's
//    {"dek": base64, "nonce": base64} holds with these precisions.
//  - Reading (json.Unmarshal, :252): member names match case-insensitively,
//    the last duplicate wins, a null counts as absent, other members are
//    ignored. ParseWrappedKey does the same, but refuses the input Go would
//    accept and then fail on or panic over (a nonce not of 12 bytes panics
//    in Go's aead.Open), and base64 with '\r'/'\n' or unused bits set.
//
// Slow on purpose: each wrap or unwrap runs scrypt (32 MiB, ~0.1-0.3 s of
// CPU). Never call them on the loop thread: run them through
// EventLoop::RunBlocking. They keep no state (pure functions of their
// arguments and OpenSSL's random generator) and are thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"
#include "encryption/volume_passphrase.h"

namespace nbdk {

// The image metadata key ceph-csi keeps the wrapped key under
// (internal/rbd/encryption.go:59; older releases wrote
// ".rbd.csi.ceph.com/dek", which ceph-csi migrates on read, :60, :430).
inline constexpr std::string_view kWrappedKeyMetadataKey = "rbd.csi.ceph.com/dek";

inline constexpr size_t kWrapNonceBytes = 12;
inline constexpr size_t kWrapTagBytes = 16;
// Far more than a wrapped 28-character passphrase (about 100 bytes); the
// longest passphrase wrapped still gives text ParseWrappedKey accepts.
inline constexpr size_t kMaxWrappedKeyJsonBytes = 4096;
inline constexpr size_t kMaxWrappablePassphraseBytes = 1024;

// The stored form, decoded. Not secret: the passphrase is encrypted in it.
struct WrappedKey {
  std::string sealed;  // ciphertext followed by the 16-byte GCM tag
  std::string nonce;   // 12 bytes

  bool operator==(const WrappedKey&) const = default;
};

// The JSON text read as above. Corruption naming the field: "wrapped key:
// nonce: 8 bytes, not 12", "wrapped key: dek: missing", "wrapped key:
// invalid JSON at offset 3: ...", "wrapped key: 5000 bytes, more than
// 4096". Never shows the input itself.
Result<WrappedKey> ParseWrappedKey(std::string_view json);
// The JSON text exactly as ceph-csi writes it: {"dek":"...","nonce":"..."}.
std::string EncodeWrappedKey(const WrappedKey& key);

// `passphrase` sealed under the key from `encryption_passphrase` and
// `volume_id` with a new random nonce: the JSON text to store.
// InvalidArgument for an empty volume ID (ceph-csi never has one; an empty
// salt would tie the key to the secret alone) or a passphrase longer than
// kMaxWrappablePassphraseBytes; Internal when OpenSSL fails.
Result<std::string> WrapVolumePassphrase(const SecretBytes& passphrase, const SecretBytes& encryption_passphrase,
                                         std::string_view volume_id);

// The passphrase sealed in `json`. ParseWrappedKey's errors, then
// InvalidArgument "wrapped key: authentication failed: ..." when the tag
// does not verify: the encryptionPassphrase or the volume ID is not the one
// it was wrapped with (a clone's key is re-wrapped under its own volume
// ID), or the stored text was altered; GCM cannot tell these apart, and a
// wrong secret in the request is the likely one. Internal when OpenSSL fails.
Result<SecretBytes> UnwrapVolumePassphrase(std::string_view json, const SecretBytes& encryption_passphrase,
                                           std::string_view volume_id);

}  // namespace nbdk
