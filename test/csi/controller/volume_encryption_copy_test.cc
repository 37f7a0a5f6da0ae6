// A clone's, restore's or snapshot's encryption (CopyEncryptionSteps): the
// source's passphrase re-wrapped under the new ID, its state copied, after
// an RBD clone that copied the parent's metadata as librbd does; each
// crash point; the sources ceph-csi's older releases left.
#include <gtest/gtest.h>

#include "csi/controller/volume_encryption.h"
#include "encryption/key_wrap.h"
#include "test/csi/controller/encryption_fixture.h"

namespace nbdk {
namespace {

using test::kCloneId;
using test::kSecret;
using test::kVolumeId;

using Metadata = std::map<std::string, std::string>;

class CopyEncryptionTest : public test::EncryptionFixture {
 protected:
  // csi-vol-src: a metadata-KMS volume (ID kVolumeId) whose key a Node has
  // formatted with; csi-vol-clone: its clone, with the copy of its metadata
  // librbd's clone makes.
  void SetUp() override {
    EncryptionFixture::SetUp();
    auto passphrase = GenerateVolumePassphrase();
    ASSERT_TRUE(passphrase.ok());
    passphrase_ = std::string(passphrase->Reveal());
    auto wrapped = WrapVolumePassphrase(*passphrase, secret_, kVolumeId);
    ASSERT_TRUE(wrapped.ok());
    metadata_->images["csi-vol-src"] = {{"rbd.csi.ceph.com/dek", *wrapped},
                                        {"rbd.csi.ceph.com/encrypted", "encrypted"}};
    metadata_->images["csi-vol-clone"] = metadata_->images["csi-vol-src"];
  }

  std::vector<RbdStep> Steps(KmsType source, KmsType target) {
    return CopyEncryptionSteps(Image("csi-vol-src", kVolumeId, source), Image("csi-vol-clone", kCloneId, target),
                               secret_);
  }
  const Metadata& Clone() { return metadata_->images["csi-vol-clone"]; }

  std::string passphrase_;
};

TEST_F(CopyEncryptionTest, TheCloneOpensWithTheSourcesPassphraseUnderItsOwnId) {
  auto steps = Steps(KmsType::kMetadata, KmsType::kMetadata);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].name, "re-wrap the passphrase of csi-vol-src under csi-vol-clone's volume ID");
  EXPECT_EQ(steps[1].name, "copy the encryption state of csi-vol-src to csi-vol-clone");
  ASSERT_TRUE(RunRbdSteps(steps).ok());
  EXPECT_EQ(ExpectOpens(Clone().at("rbd.csi.ceph.com/dek"), kCloneId), passphrase_);
  EXPECT_FALSE(UnwrapVolumePassphrase(Clone().at("rbd.csi.ceph.com/dek"), secret_, kVolumeId).ok())
      << "still the source's wrapping";
  EXPECT_EQ(Clone().at("rbd.csi.ceph.com/encrypted"), "encrypted");
  // The source is read, never written.
  EXPECT_EQ(ExpectOpens(metadata_->images["csi-vol-src"].at("rbd.csi.ceph.com/dek"), kVolumeId), passphrase_);
  const Metadata done = Clone();
  ASSERT_TRUE(RunRbdSteps(steps).ok());
  EXPECT_EQ(Clone(), done) << "a repeat re-wrapped a key that already opens";
}

TEST_F(CopyEncryptionTest, EveryCrashPointIsFinishedByARetry) {
  const Metadata copied = Clone();
  for (size_t k = 0; k <= 2; ++k) {
    SCOPED_TRACE("crash after step " + std::to_string(k));
    metadata_->images["csi-vol-clone"] = copied;
    auto steps = Steps(KmsType::kMetadata, KmsType::kMetadata);
    for (size_t i = 0; i < k; ++i) ASSERT_TRUE(steps[i].run().ok());
    ASSERT_TRUE(RunRbdSteps(steps).ok());
    EXPECT_EQ(ExpectOpens(Clone().at("rbd.csi.ceph.com/dek"), kCloneId), passphrase_);
    EXPECT_EQ(Clone().at("rbd.csi.ceph.com/encrypted"), "encrypted");
  }
}

// Without librbd's copy (or with the copy's keys gone) the result is the same.
TEST_F(CopyEncryptionTest, AnEmptyTargetGetsKeyAndState) {
  metadata_->images["csi-vol-clone"].clear();
  ASSERT_TRUE(RunRbdSteps(Steps(KmsType::kMetadata, KmsType::kMetadata)).ok());
  EXPECT_EQ(ExpectOpens(Clone().at("rbd.csi.ceph.com/dek"), kCloneId), passphrase_);
  EXPECT_EQ(Clone().at("rbd.csi.ceph.com/encrypted"), "encrypted");
}

// ceph-csi's default KMS: the passphrase is the secret, which a metadata
// KMS then wraps; into another default-KMS volume nothing is stored.
TEST_F(CopyEncryptionTest, ADefaultKmsSourcesPassphraseIsTheSecret) {
  metadata_->images["csi-vol-src"] = {{"rbd.csi.ceph.com/encrypted", "encryptionPrepared"}};
  metadata_->images["csi-vol-clone"] = metadata_->images["csi-vol-src"];
  ASSERT_TRUE(RunRbdSteps(Steps(KmsType::kDefault, KmsType::kMetadata)).ok());
  EXPECT_EQ(ExpectOpens(Clone().at("rbd.csi.ceph.com/dek"), kCloneId), kSecret);
  metadata_->images["csi-vol-clone"].clear();
  auto steps = Steps(KmsType::kDefault, KmsType::kDefault);
  ASSERT_EQ(steps.size(), 1u);
  ASSERT_TRUE(RunRbdSteps(steps).ok());
  EXPECT_EQ(Clone(), (Metadata{{"rbd.csi.ceph.com/encrypted", "encryptionPrepared"}}));
}

// Releases before v3.4 wrote the keys with a leading '.'; ceph-csi reads
// them still. The state is read trimmed, as ceph-csi reads it.
TEST_F(CopyEncryptionTest, ASourceWithTheOldKeysIsRead) {
  Metadata& source = metadata_->images["csi-vol-src"];
  source = {{".rbd.csi.ceph.com/dek", source.at("rbd.csi.ceph.com/dek")},
            {".rbd.csi.ceph.com/encrypted", " encrypted\n"}};
  metadata_->images["csi-vol-clone"] = source;
  ASSERT_TRUE(RunRbdSteps(Steps(KmsType::kMetadata, KmsType::kMetadata)).ok());
  EXPECT_EQ(ExpectOpens(Clone().at("rbd.csi.ceph.com/dek"), kCloneId), passphrase_);
  EXPECT_EQ(Clone().at("rbd.csi.ceph.com/encrypted"), "encrypted");
}

// A clone a Node has formatted since keeps its state whatever the source's.
TEST_F(CopyEncryptionTest, ATargetsStateIsNeverReplaced) {
  metadata_->images["csi-vol-src"]["rbd.csi.ceph.com/encrypted"] = "encryptionPrepared";
  ASSERT_TRUE(RunRbdSteps(Steps(KmsType::kMetadata, KmsType::kMetadata)).ok());
  EXPECT_EQ(Clone().at("rbd.csi.ceph.com/encrypted"), "encrypted");
}

TEST_F(CopyEncryptionTest, ASourceWithoutItsKeysIsFailedPrecondition) {
  metadata_->images["csi-vol-clone"].clear();
  metadata_->images["csi-vol-src"].erase("rbd.csi.ceph.com/dek");
  ExpectError(RunRbdSteps(Steps(KmsType::kMetadata, KmsType::kMetadata)), Code::kFailedPrecondition,
              {"image csi-vol-src", "no rbd.csi.ceph.com/dek"});
  metadata_->images["csi-vol-src"] = {};
  ExpectError(RunRbdSteps(Steps(KmsType::kDefault, KmsType::kDefault)), Code::kFailedPrecondition,
              {"image csi-vol-src", "no rbd.csi.ceph.com/encrypted"});
  EXPECT_TRUE(Clone().empty());
}

// Another secret than the source was wrapped with: key_wrap.h's answer,
// and neither secret in it.
TEST_F(CopyEncryptionTest, AWrongSecretIsInvalidArgumentAndChangesNothing) {
  const Metadata copied = Clone();
  SecretBytes wrong = SecretBytes::CopyOf("WRONG-secret-91c2");
  auto steps = CopyEncryptionSteps(Image("csi-vol-src", kVolumeId, KmsType::kMetadata),
                                   Image("csi-vol-clone", kCloneId, KmsType::kMetadata), wrong);
  Status s = RunRbdSteps(steps);
  ExpectError(s, Code::kInvalidArgument, {"authentication failed", "csi-vol-src"});
  EXPECT_EQ(s.message().find("WRONG-secret"), std::string::npos) << s.message();
  EXPECT_EQ(Clone(), copied);
}

}  // namespace
}  // namespace nbdk
