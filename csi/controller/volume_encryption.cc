#include "csi/controller/volume_encryption.h"

#include <algorithm>

#include "base/quote_field.h"
#include "encryption/key_wrap.h"

namespace nbdk {
namespace {

std::string Describe(const KmsSettings& kms) {
  return "KMS " + QuoteField(kms.kms_id) + " (type " + std::string(KmsTypeName(kms.type)) + ")";
}

std::string Describe(const JournalEncryption& recorded) {
  return recorded.kms_id.empty() ? "unencrypted" : "encrypted with KMS " + QuoteField(recorded.kms_id);
}

std::string DescribeRequest(const std::optional<std::string>& kms_id) {
  return kms_id ? "encrypted with KMS " + QuoteField(*kms_id) : "unencrypted";
}

Status WrapNewPassphrase(const EncryptedImage& target, const SecretBytes& encryption_passphrase) {
  // A state: the key is made, and a Node may have formatted with it.
  auto state = target.metadata->Get(target.image, kEncryptionStateKey);
  if (!state.ok()) return state.status();
  auto dek = target.metadata->Get(target.image, std::string(kWrappedKeyMetadataKey));
  if (!dek.ok()) return dek.status();
  if (*state || *dek) return Status::Ok();
  auto passphrase = GenerateVolumePassphrase();
  if (!passphrase.ok()) return passphrase.status();
  auto wrapped = WrapVolumePassphrase(*passphrase, encryption_passphrase, target.id);
  if (!wrapped.ok()) return wrapped.status().WithContext("image " + target.image);
  return target.metadata->Set(target.image, std::string(kWrappedKeyMetadataKey), *wrapped);
}

Status MarkPrepared(const EncryptedImage& target) {
  auto state = target.metadata->Get(target.image, kEncryptionStateKey);
  if (!state.ok()) return state.status();
  // Never back from "encrypted" to "encryptionPrepared": that would ask the
  // Node to format again.
  if (*state) return Status::Ok();
  return target.metadata->Set(target.image, kEncryptionStateKey, kEncryptionPrepared);
}

// The source's passphrase, named as the source in errors.
Result<SecretBytes> SourcePassphrase(const EncryptedImage& source, const SecretBytes& encryption_passphrase) {
  auto passphrase = ReadVolumePassphrase(*source.metadata, source.image, source.id, source.kms, encryption_passphrase);
  if (!passphrase.ok()) return passphrase.status().WithContext("source");
  return passphrase;
}

Status Rewrap(const EncryptedImage& source, const EncryptedImage& target, const SecretBytes& encryption_passphrase) {
  // After the clone the target holds its parent's dek, under the parent's
  // ID; one that opens under the target's own ID was re-wrapped already.
  auto current = target.metadata->Get(target.image, std::string(kWrappedKeyMetadataKey));
  if (!current.ok()) return current.status();
  if (*current && UnwrapVolumePassphrase(**current, encryption_passphrase, target.id).ok()) return Status::Ok();
  auto passphrase = SourcePassphrase(source, encryption_passphrase);
  if (!passphrase.ok()) return passphrase.status();
  auto wrapped = WrapVolumePassphrase(*passphrase, encryption_passphrase, target.id);
  if (!wrapped.ok()) return wrapped.status().WithContext("image " + target.image);
  return target.metadata->Set(target.image, std::string(kWrappedKeyMetadataKey), *wrapped);
}

Status CopyState(const EncryptedImage& source, const EncryptedImage& target) {
  auto current = target.metadata->Get(target.image, kEncryptionStateKey);
  if (!current.ok()) return current.status();
  if (*current) return Status::Ok();
  auto state = ReadEncryptionState(*source.metadata, source.image);
  if (!state.ok()) return state.status();
  if (!*state) {
    return Status::FailedPrecondition("source " + QuoteField(source.id) + ": image " + source.image + ": no " +
                                      kEncryptionStateKey + ", though its journal says it is encrypted");
  }
  return target.metadata->Set(target.image, kEncryptionStateKey, **state);
}

}  // namespace

JournalEncryption JournalEncryptionFor(const std::optional<std::string>& kms_id) {
  if (!kms_id) return {};
  return {*kms_id, kBlockEncryptionType};
}

bool IsBlockEncrypted(const JournalEncryption& recorded) {
  return !recorded.kms_id.empty() && (recorded.type.empty() || recorded.type == kBlockEncryptionType);
}

Result<std::optional<KmsSettings>> RecordedKms(const JournalEncryption& recorded, const KmsResolver& resolve,
                                               const std::string& what) {
  if (recorded.kms_id.empty()) return std::optional<KmsSettings>();
  if (recorded.type == "file") {
    return Status::InvalidArgument(what + ": encrypted with fscrypt (encryptionType file), which is not supported");
  }
  if (!IsBlockEncrypted(recorded)) {
    return Status::InvalidArgument(what + ": " + kEncryptionTypeKey + " " + QuoteField(recorded.type) +
                                   " is neither block nor file");
  }
  auto kms = resolve(recorded.kms_id);
  if (!kms.ok()) return kms.status().WithContext(what);
  return std::optional<KmsSettings>(std::move(*kms));
}

Status CheckRepeatedEncryption(const std::string& name, const JournalEncryption& reserved,
                               const std::optional<std::string>& requested_kms_id) {
  const bool type_matches = reserved.type.empty() || reserved.type == kBlockEncryptionType;
  const bool same = requested_kms_id ? reserved.kms_id == *requested_kms_id && type_matches : reserved.kms_id.empty();
  if (same) return Status::Ok();
  std::string recorded = Describe(reserved);
  if (!reserved.kms_id.empty() && !type_matches) recorded += " (encryptionType " + QuoteField(reserved.type) + ")";
  return Status::AlreadyExists("name " + QuoteField(name) + ": volume exists " + recorded + ", the request is " +
                               DescribeRequest(requested_kms_id) + "; nothing changed");
}

Result<KmsSettings> ResolveRequestedKms(const std::string& kms_id, const KmsResolver& resolve) {
  auto kms = resolve(kms_id);
  if (!kms.ok()) return kms.status().WithContext("parameters.encryptionKMSID");
  return kms;
}

Result<VolumeEncryptionPlan> PlanVolumeEncryption(const CreateVolumeParams& params,
                                                  const std::optional<KmsSettings>& volume_kms,
                                                  const JournalEncryption& source, const KmsResolver& resolve) {
  VolumeEncryptionPlan plan{volume_kms, std::nullopt};
  if (params.source.kind == ContentSource::Kind::kNone) return plan;
  const char* kind = params.source.kind == ContentSource::Kind::kSnapshot ? "snapshot " : "volume ";
  const std::string what = std::string("volume_content_source: ") + kind + QuoteField(params.source.id);
  auto source_kms = RecordedKms(source, resolve, what);
  if (!source_kms.ok()) return source_kms.status();
  plan.source = std::move(*source_kms);
  if (plan.source && !plan.volume) {
    return Status::InvalidArgument("parameters.encrypted: false, but " + what + " is " + Describe(source) +
                                   ": ceph-csi makes no unencrypted volume from an encrypted one");
  }
  if (!plan.source && plan.volume) {
    return Status::InvalidArgument("parameters.encrypted: true, but " + what +
                                   " is unencrypted: ceph-csi makes no encrypted volume from an unencrypted one");
  }
  if (plan.source && plan.source->type == KmsType::kMetadata && plan.volume->type == KmsType::kDefault) {
    return Status::InvalidArgument("parameters.encryptionKMSID: " + Describe(*plan.volume) +
                                   " opens a volume with the secret itself, but the passphrase of " + what +
                                   " is its own (" + Describe(*plan.source) + "): use a KMS of type metadata");
  }
  return plan;
}

std::vector<RbdStep> PrepareEncryptionSteps(const EncryptedImage& target, const SecretBytes& encryption_passphrase) {
  std::vector<RbdStep> steps;
  const SecretBytes* secret = &encryption_passphrase;
  if (target.kms == KmsType::kMetadata) {
    steps.push_back({"wrap a new passphrase into " + target.image + "'s " + std::string(kWrappedKeyMetadataKey),
                     [target, secret] { return WrapNewPassphrase(target, *secret); }});
  }
  steps.push_back({"mark " + target.image + " " + kEncryptionPrepared, [target] { return MarkPrepared(target); }});
  return steps;
}

std::vector<RbdStep> CopyEncryptionSteps(const EncryptedImage& source, const EncryptedImage& target,
                                         const SecretBytes& encryption_passphrase) {
  std::vector<RbdStep> steps;
  const SecretBytes* secret = &encryption_passphrase;
  if (target.kms == KmsType::kMetadata) {
    steps.push_back({"re-wrap the passphrase of " + source.image + " under " + target.image + "'s volume ID",
                     [source, target, secret] { return Rewrap(source, target, *secret); }});
  }
  steps.push_back({"copy the encryption state of " + source.image + " to " + target.image,
                   [source, target] { return CopyState(source, target); }});
  return steps;
}

}  // namespace nbdk
