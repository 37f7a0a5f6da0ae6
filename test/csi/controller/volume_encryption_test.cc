// The Controller's encryption (csi/controller/volume_encryption.h) on an
// in-memory image metadata store and a real KMS config file: what each KMS
// type leaves in ceph-csi's keys, the re-wrap of a clone, restore or
// snapshot, a crash after every step, and the refusals. Every key made here
// is opened with encryption/key_wrap.h, as the Node of either driver opens
// it. The secret-leak test is in volume_encryption_secret_test.cc.
#include "csi/controller/volume_encryption.h"

#include <gtest/gtest.h>

#include "encryption/key_wrap.h"
#include "test/csi/controller/encryption_fixture.h"

namespace nbdk {
namespace {

using test::EncryptionFixture;
using test::kCloneId;
using test::kSecret;
using test::kVolumeId;

class VolumeEncryptionTest : public EncryptionFixture {};

TEST_F(VolumeEncryptionTest, TheJournalRecordIsCephCsis) {
  EXPECT_EQ(JournalEncryptionFor(std::nullopt), JournalEncryption{});
  EXPECT_EQ(JournalEncryptionFor("secrets-metadata"), (JournalEncryption{"secrets-metadata", "block"}));
  EXPECT_FALSE(IsBlockEncrypted({}));
  EXPECT_TRUE(IsBlockEncrypted({"default", "block"}));
  EXPECT_TRUE(IsBlockEncrypted({"default", ""}));  // before ceph-csi recorded a type
  EXPECT_FALSE(IsBlockEncrypted({"default", "file"}));
}

TEST_F(VolumeEncryptionTest, ARecordedKmsIsResolvedOrRefusedByName) {
  auto none = RecordedKms({}, Resolver(), "volume 'v'");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, std::nullopt);
  auto legacy = RecordedKms({"secrets-metadata", ""}, Resolver(), "volume 'v'");
  ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
  EXPECT_EQ(*legacy, (KmsSettings{"secrets-metadata", KmsType::kMetadata}));
  ExpectError(RecordedKms({"default", "file"}, Resolver(), "volume 'v'").status(), Code::kInvalidArgument,
              {"volume 'v'", "fscrypt"});
  ExpectError(RecordedKms({"default", "luks"}, Resolver(), "volume 'v'").status(), Code::kInvalidArgument,
              {"volume 'v'", "'luks'"});
  ExpectError(RecordedKms({"vault-kms", "block"}, Resolver(), "volume 'v'").status(), Code::kInvalidArgument,
              {"volume 'v'", "'vault-kms'", "'vault'"});
  ExpectError(ResolveRequestedKms("vault-kms", Resolver()).status(), Code::kInvalidArgument,
              {"parameters.encryptionKMSID", "'vault'"});
  ExpectError(ResolveRequestedKms("no-such-kms", Resolver()).status(), Code::kFailedPrecondition,
              {"parameters.encryptionKMSID", "'no-such-kms'"});
  auto resolved = ResolveRequestedKms("default", Resolver());
  ASSERT_TRUE(resolved.ok());
  EXPECT_EQ(resolved->type, KmsType::kDefault);
}

// ceph-csi's CheckReservation compares a repeat's KMS with the record; the
// CSI spec's code for a name whose volume does not fit is ALREADY_EXISTS.
TEST_F(VolumeEncryptionTest, ARepeatAskingForAnotherEncryptionIsAlreadyExists) {
  EXPECT_TRUE(CheckRepeatedEncryption("pvc", {}, std::nullopt).ok());
  EXPECT_TRUE(CheckRepeatedEncryption("pvc", {"m", "block"}, "m").ok());
  EXPECT_TRUE(CheckRepeatedEncryption("pvc", {"m", ""}, "m").ok());
  ExpectError(CheckRepeatedEncryption("pvc", {"m", "block"}, std::nullopt), Code::kAlreadyExists,
              {"'pvc'", "encrypted with KMS 'm'", "the request is unencrypted"});
  ExpectError(CheckRepeatedEncryption("pvc", {}, "m"), Code::kAlreadyExists,
              {"exists unencrypted", "encrypted with KMS 'm'"});
  ExpectError(CheckRepeatedEncryption("pvc", {"m", "block"}, "default"), Code::kAlreadyExists,
              {"KMS 'm'", "KMS 'default'"});
  ExpectError(CheckRepeatedEncryption("pvc", {"m", "file"}, "m"), Code::kAlreadyExists, {"encryptionType 'file'"});
}

// ceph-csi's isCompatibleEncryption, and the one combination whose copy
// could never open.
TEST_F(VolumeEncryptionTest, ASourceMustBeEncryptedAsTheRequestAsks) {
  const std::optional<KmsSettings> metadata = KmsSettings{"secrets-metadata", KmsType::kMetadata};
  const std::optional<KmsSettings> builtin = KmsSettings{"default", KmsType::kDefault};
  auto plan = PlanVolumeEncryption(Params(ContentSource::Kind::kNone), metadata, {}, Resolver());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->volume, metadata);
  EXPECT_EQ(plan->source, std::nullopt);
  auto restore = Params(ContentSource::Kind::kSnapshot);
  plan = PlanVolumeEncryption(restore, metadata, {"default", "block"}, Resolver());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->source, builtin);
  ExpectError(PlanVolumeEncryption(restore, std::nullopt, {"default", "block"}, Resolver()).status(),
              Code::kInvalidArgument, {"parameters.encrypted: false", "snapshot '", "encrypted with KMS 'default'"});
  ExpectError(PlanVolumeEncryption(restore, metadata, {}, Resolver()).status(), Code::kInvalidArgument,
              {"parameters.encrypted: true", "is unencrypted"});
  auto clone = Params(ContentSource::Kind::kVolume);
  ExpectError(PlanVolumeEncryption(clone, builtin, {"secrets-metadata", "block"}, Resolver()).status(),
              Code::kInvalidArgument, {"parameters.encryptionKMSID", "volume '", "type metadata"});
  ExpectError(PlanVolumeEncryption(clone, metadata, {"default", "file"}, Resolver()).status(), Code::kInvalidArgument,
              {"volume_content_source: volume '", "fscrypt"});
  auto plain = PlanVolumeEncryption(clone, std::nullopt, {}, Resolver());
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->volume || plain->source);
}

TEST_F(VolumeEncryptionTest, AMetadataKmsVolumeGetsAWrappedPassphraseThenItsState) {
  auto steps = PrepareEncryptionSteps(Target(KmsType::kMetadata), secret_);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].name, "wrap a new passphrase into csi-vol-new's rbd.csi.ceph.com/dek");
  EXPECT_EQ(steps[1].name, "mark csi-vol-new encryptionPrepared");
  ASSERT_TRUE(RunRbdSteps(steps).ok());
  const auto& meta = metadata_->images["csi-vol-new"];
  EXPECT_EQ(meta.at("rbd.csi.ceph.com/encrypted"), "encryptionPrepared");
  std::string passphrase = ExpectOpens(meta.at("rbd.csi.ceph.com/dek"), kVolumeId);
  EXPECT_EQ(passphrase.size(), kVolumePassphraseLength);
  EXPECT_FALSE(UnwrapVolumePassphrase(meta.at("rbd.csi.ceph.com/dek"), secret_, kCloneId).ok());
  const auto made = metadata_->images;
  ASSERT_TRUE(RunRbdSteps(steps).ok());
  EXPECT_EQ(metadata_->images, made) << "a repeat changed the key";
}

TEST_F(VolumeEncryptionTest, ADefaultKmsVolumeStoresNoKey) {
  auto steps = PrepareEncryptionSteps(Target(KmsType::kDefault), secret_);
  ASSERT_EQ(steps.size(), 1u);
  ASSERT_TRUE(RunRbdSteps(steps).ok());
  EXPECT_EQ(metadata_->images["csi-vol-new"],
            (std::map<std::string, std::string>{{"rbd.csi.ceph.com/encrypted", "encryptionPrepared"}}));
}

// A crash after any prefix of the steps, then the whole list again: the
// same outcome as a clean run, and a repeat keeps the key it finds.
TEST_F(VolumeEncryptionTest, EveryCrashPointOfPrepareIsFinishedByARetry) {
  for (size_t k = 0; k <= 2; ++k) {
    SCOPED_TRACE("crash after step " + std::to_string(k));
    metadata_->images["csi-vol-new"].clear();
    auto steps = PrepareEncryptionSteps(Target(KmsType::kMetadata), secret_);
    for (size_t i = 0; i < k; ++i) ASSERT_TRUE(steps[i].run().ok());
    const auto crashed = metadata_->images["csi-vol-new"];
    ASSERT_TRUE(RunRbdSteps(steps).ok());
    const auto& meta = metadata_->images["csi-vol-new"];
    EXPECT_EQ(meta.at("rbd.csi.ceph.com/encrypted"), "encryptionPrepared");
    ExpectOpens(meta.at("rbd.csi.ceph.com/dek"), kVolumeId);
    if (crashed.count("rbd.csi.ceph.com/dek")) {
      EXPECT_EQ(meta.at("rbd.csi.ceph.com/dek"), crashed.at("rbd.csi.ceph.com/dek")) << "the key was replaced";
    }
  }
}

TEST_F(VolumeEncryptionTest, AFormattedVolumeIsNeverMarkedPreparedAgain) {
  metadata_->images["csi-vol-new"] = {{"rbd.csi.ceph.com/encrypted", "encrypted"}};
  ASSERT_TRUE(RunRbdSteps(PrepareEncryptionSteps(Target(KmsType::kMetadata), secret_)).ok());
  EXPECT_EQ(metadata_->images["csi-vol-new"],
            (std::map<std::string, std::string>{{"rbd.csi.ceph.com/encrypted", "encrypted"}}));
}

TEST_F(VolumeEncryptionTest, AFailedWriteIsReportedAndRetried) {
  metadata_->writes_left = 0;
  Status s = RunRbdSteps(PrepareEncryptionSteps(Target(KmsType::kMetadata), secret_));
  EXPECT_EQ(s.code(), Code::kIoError) << s.ToString();
  EXPECT_TRUE(metadata_->images["csi-vol-new"].empty());
  metadata_->writes_left = -1;
  ASSERT_TRUE(RunRbdSteps(PrepareEncryptionSteps(Target(KmsType::kMetadata), secret_)).ok());
  ExpectOpens(metadata_->images["csi-vol-new"].at("rbd.csi.ceph.com/dek"), kVolumeId);
}

}  // namespace
}  // namespace nbdk
