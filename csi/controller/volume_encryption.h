// A volume's encryption as the Controller makes and copies it, in ceph-csi's
// format (its internal/rbd/encryption.go), so that the Node of either driver
// opens what the Controller of either made (issue 28):
//
//  - the journal records the KMS ID and "block" with the reservation
//    (csi/controller/omap_volume_journal.h); a repeated CreateVolume that
//    asks for another encryption is AlreadyExists;
//  - the image metadata rbd.csi.ceph.com/encrypted is "encryptionPrepared"
//    once the key is made (the Node's first luksFormat makes it
//    "encrypted");
//  - KMS type metadata: a new random passphrase (encryption/volume_passphrase.h)
//    wrapped under the secret encryptionPassphrase and the volume ID into
//    rbd.csi.ceph.com/dek (encryption/key_wrap.h); type default: nothing is
//    stored, the passphrase is the secret itself;
//  - a clone, a restore and a snapshot (an RBD clone too) take their
//    source's passphrase, re-wrapped under their own ID, and its state.
//
// The work on an image is a list of RbdSteps (csi/controller/rbd_steps.h)
// that the operation puts in its own list, each idempotent: a retry after
// any prefix finishes the encryption and never replaces a key already made.
// The steps are BLOCKING: librbd through ImageMetadata, and scrypt (each
// wrap or unwrap spends ~0.1-0.3 s of CPU), on the Controller's lane.
// Secrets are referenced, never copied into a message.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ceph/image_metadata.h"
#include "csi/controller/controller_request.h"
#include "csi/controller/omap_volume_journal.h"
#include "csi/controller/rbd_steps.h"
#include "csi/image_encryption.h"
#include "encryption/kms_config.h"
#include "encryption/volume_passphrase.h"

namespace nbdk {

// Resolves a KMS ID through ceph-csi's KMS config (ResolveKms on the
// daemon's --kms-config). BLOCKING.
using KmsResolver = std::function<Result<KmsSettings>(std::string_view kms_id)>;

// What the journal records for a volume encrypted with `kms_id` (nullopt:
// not encrypted, nothing recorded).
JournalEncryption JournalEncryptionFor(const std::optional<std::string>& kms_id);

// Whether a journal record is of a LUKS volume: a KMS ID, and type block
// or none (ceph-csi wrote no type before fscrypt).
bool IsBlockEncrypted(const JournalEncryption& recorded);

// The KMS of an existing volume or snapshot (`what` names it in errors)
// from its journal record; nullopt when it is not encrypted. A record
// without a type is block, as above. "file" is InvalidArgument (fscrypt is
// not supported), so is any other type; and the resolver's errors.
Result<std::optional<KmsSettings>> RecordedKms(const JournalEncryption& recorded, const KmsResolver& resolve,
                                               const std::string& what);

// OK when a repeated CreateVolume of `name` asks for the encryption its
// reservation records; AlreadyExists naming both otherwise (encrypted or
// not, another KMS ID), as the CSI spec asks of a name whose volume is
// incompatible with the request.
Status CheckRepeatedEncryption(const std::string& name, const JournalEncryption& reserved,
                               const std::optional<std::string>& requested_kms_id);

// The KMS a CreateVolume's parameters.encryptionKMSID names (`kms_id`, as
// ParseEncryptionKmsId returns it), resolved before the cluster is reached,
// as ceph-csi does: the resolver's errors in the field's name. BLOCKING.
Result<KmsSettings> ResolveRequestedKms(const std::string& kms_id, const KmsResolver& resolve);

// CreateVolume's encryption, decided before anything is reserved.
struct VolumeEncryptionPlan {
  std::optional<KmsSettings> volume;  // the new volume's KMS; nullopt: not encrypted
  std::optional<KmsSettings> source;  // the content source's; nullopt: none, or not encrypted
};

// BLOCKING (reads the KMS config for the source's KMS ID). `volume_kms` is
// ResolveRequestedKms's answer (nullopt: not encrypted), `source` the
// content source's journal record (empty without a source).
// InvalidArgument: RecordedKms's errors for the source; a source encrypted
// and a request not, or the other way (ceph-csi refuses both); a source
// whose passphrase is its own (metadata) into a default-KMS volume, which
// opens with the secret itself and so could never open the copied data.
Result<VolumeEncryptionPlan> PlanVolumeEncryption(const CreateVolumeParams& params,
                                                  const std::optional<KmsSettings>& volume_kms,
                                                  const JournalEncryption& source, const KmsResolver& resolve);

// An encrypted image and the ID its key is wrapped under.
struct EncryptedImage {
  std::shared_ptr<ImageMetadata> metadata;  // its pool's
  std::string image;
  std::string id;  // the CSI volume (or snapshot) ID
  KmsType kms = KmsType::kDefault;
};

// A new empty volume's steps: (metadata KMS) "wrap a new passphrase into
// <image>'s dek" unless a dek or a state is there; "mark <image>
// encryptionPrepared" unless a state is there. `encryption_passphrase`
// outlives the steps.
std::vector<RbdStep> PrepareEncryptionSteps(const EncryptedImage& target, const SecretBytes& encryption_passphrase);

// A clone's, restore's or snapshot's steps, after the RBD clone (which
// copied its parent's metadata): (target metadata KMS) "re-wrap the
// passphrase of <source> under the target's ID", unless the target's dek
// already opens under its ID; "copy the encryption state of <source>",
// unless the target has one. A source without a dek (metadata) or without
// a state is FailedPrecondition; a secret that does not open the source's
// dek is key_wrap.h's InvalidArgument. `encryption_passphrase` outlives the
// steps.
std::vector<RbdStep> CopyEncryptionSteps(const EncryptedImage& source, const EncryptedImage& target,
                                         const SecretBytes& encryption_passphrase);

}  // namespace nbdk
