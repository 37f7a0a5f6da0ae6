// A volume's encryption as its image's metadata holds it, in ceph-csi's
// keys (internal/rbd/encryption.go): the one reader and writer of those
// keys, for the Controller that makes and copies them
// (csi/controller/volume_encryption.h) and the Node that formats and opens
// the volume (csi/node/luks_stage.h).
//
// Every function is BLOCKING (librbd through ImageMetadata; scrypt in an
// unwrap): run it in EventLoop::RunBlocking. Secrets are referenced, never
// copied into a message.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "ceph/image_metadata.h"
#include "encryption/kms_config.h"
#include "encryption/volume_passphrase.h"

namespace nbdk {

// The state's key and its two values (encryption.go:51-54); releases before
// v3.4 wrote the keys with a leading '.', which ceph-csi still reads (:55,
// :60).
inline constexpr char kEncryptionStateKey[] = "rbd.csi.ceph.com/encrypted";
inline constexpr char kLegacyEncryptionStateKey[] = ".rbd.csi.ceph.com/encrypted";
inline constexpr char kLegacyWrappedKeyMetadataKey[] = ".rbd.csi.ceph.com/dek";
inline constexpr char kEncryptionPrepared[] = "encryptionPrepared";
inline constexpr char kEncryptionDone[] = "encrypted";

// `key`, else `legacy_key` (ceph-csi migrates it on read; nbdkeeper reads
// it and leaves it alone).
Result<std::optional<std::string>> GetEitherKey(ImageMetadata& metadata, const std::string& image,
                                                const std::string& key, const std::string& legacy_key);

// The state's value with surrounding whitespace trimmed, as ceph-csi reads
// it; nullopt when neither key is set.
Result<std::optional<std::string>> ReadEncryptionState(ImageMetadata& metadata, const std::string& image);

// The LUKS passphrase of `image`, the volume (or snapshot) `id`: the
// secret itself (KMS default), or its dek opened under `id` (metadata).
// FailedPrecondition when a metadata image has no dek; key_wrap.h's errors
// (a wrong secret is InvalidArgument), each naming `id` and the image.
Result<SecretBytes> ReadVolumePassphrase(ImageMetadata& metadata, const std::string& image, const std::string& id,
                                         KmsType kms, const SecretBytes& encryption_passphrase);

}  // namespace nbdk
