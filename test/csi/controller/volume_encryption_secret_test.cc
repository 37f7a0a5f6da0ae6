// The request's encryptionPassphrase and a volume's passphrase never leave
// the Controller's encryption in clear: every flow of
// csi/controller/volume_encryption.h, successful or not, runs with stdout
// and stderr captured, and neither secret is in that output, in a message,
// in a step's name or in a value written to the image metadata.
#include <gtest/gtest.h>

#include <vector>

#include "csi/controller/volume_encryption.h"
#include "encryption/key_wrap.h"
#include "test/csi/controller/encryption_fixture.h"

namespace nbdk {
namespace {

using test::kCloneId;
using test::kSecret;
using test::kVolumeId;

class EncryptionSecretTest : public test::EncryptionFixture {
 protected:
  void Note(const Status& s) { texts_.push_back(s.ToString()); }
  void Note(const std::vector<RbdStep>& steps) {
    for (const RbdStep& step : steps) texts_.push_back(step.name);
  }
  void Run(const std::vector<RbdStep>& steps) {
    Note(steps);
    Note(RunRbdSteps(steps));
  }

  std::vector<std::string> texts_;  // every message and name the flows produced
};

TEST_F(EncryptionSecretTest, NoFlowShowsTheSecretOrAPassphrase) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const std::optional<KmsSettings> metadata = KmsSettings{"secrets-metadata", KmsType::kMetadata};
  // A new volume, then a clone of it, then a clone under another secret.
  Run(PrepareEncryptionSteps(Target(KmsType::kMetadata), secret_));
  metadata_->images["csi-vol-clone"] = metadata_->images["csi-vol-new"];
  auto source = Image("csi-vol-new", kVolumeId, KmsType::kMetadata);
  auto clone = Image("csi-vol-clone", kCloneId, KmsType::kMetadata);
  Run(CopyEncryptionSteps(source, clone, secret_));
  SecretBytes wrong = SecretBytes::CopyOf(std::string(kSecret) + "-but-another");
  Run(CopyEncryptionSteps(source, Image("csi-vol-src", kCloneId, KmsType::kMetadata), wrong));
  // The refusals.
  Note(ResolveRequestedKms("vault-kms", Resolver()).status());
  Note(ResolveRequestedKms("user-secret-metadata", Resolver()).status());
  Note(PlanVolumeEncryption(Params(ContentSource::Kind::kVolume), std::nullopt, {"secrets-metadata", "block"},
                            Resolver())
           .status());
  Note(CheckRepeatedEncryption("pvc", {"default", "block"}, std::nullopt));
  const std::string output = ::testing::internal::GetCapturedStdout() + ::testing::internal::GetCapturedStderr();

  auto passphrase =
      UnwrapVolumePassphrase(metadata_->images["csi-vol-new"].at("rbd.csi.ceph.com/dek"), secret_, kVolumeId);
  ASSERT_TRUE(passphrase.ok()) << passphrase.status().ToString();
  const std::string secrets[] = {kSecret, std::string(passphrase->Reveal())};
  for (const std::string& secret : secrets) {
    EXPECT_EQ(output.find(secret), std::string::npos) << output;
    for (const std::string& text : texts_) EXPECT_EQ(text.find(secret), std::string::npos) << text;
    for (const auto& [image, keys] : metadata_->images) {
      for (const auto& [key, value] : keys) EXPECT_EQ(value.find(secret), std::string::npos) << image << " " << key;
    }
  }
  EXPECT_GT(texts_.size(), 8u);
}

}  // namespace
}  // namespace nbdk
