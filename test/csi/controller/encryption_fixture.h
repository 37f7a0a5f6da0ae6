// EncryptionFixture: what the Controller's encryption tests share - a KMS
// config file with ceph-csi's entries, an in-memory image metadata store,
// the request's secret, and checks that open a key as a Node would.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <string>

#include "csi/controller/volume_encryption.h"
#include "encryption/key_wrap.h"
#include "test/ceph/fake_image_metadata.h"

namespace nbdk::test {

// Recognizable, so that a test can look for it anywhere.
inline constexpr char kSecret[] = "SECRET-encryptionPassphrase-4d2e81";
inline constexpr char kVolumeId[] = "0001-0009-rook-ceph-0000000000000002-aaaaaaaa-1d1a-4a9e-9a8f-2d7e0d9b7d51";
inline constexpr char kCloneId[] = "0001-0009-rook-ceph-0000000000000002-bbbbbbbb-1d1a-4a9e-9a8f-2d7e0d9b7d51";

class EncryptionFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/nbdk-kms-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    // Entries shaped as ceph-csi's examples/kms/vault/csi-kms-connection-details.yaml.
    std::ofstream(dir_ + "/config.json") << R"({
      "secrets-metadata": {"encryptionKMSType": "metadata"},
      "user-secret-metadata": {"encryptionKMSType": "metadata", "secretName": "storage-encryption-secret"},
      "vault-kms": {"encryptionKMSType": "vault", "vaultAddress": "http://vault.default.svc.cluster.local:8200"}
    })";
    for (const char* image : {"csi-vol-new", "csi-vol-src", "csi-vol-clone"}) metadata_->images[image];
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  KmsResolver Resolver() const {
    return [path = dir_ + "/config.json"](std::string_view kms_id) { return ResolveKms(kms_id, path); };
  }

  EncryptedImage Image(const std::string& image, const std::string& id, KmsType kms) const {
    return {metadata_, image, id, kms};
  }
  EncryptedImage Target(KmsType kms) const { return Image("csi-vol-new", kVolumeId, kms); }

  static CreateVolumeParams Params(ContentSource::Kind kind) {
    CreateVolumeParams p;
    p.name = "pvc-enc";
    p.source.kind = kind;
    if (kind != ContentSource::Kind::kNone) p.source.id = kVolumeId;
    return p;
  }

  // `status` is `code` with every fragment in its message, and never the
  // secret.
  static void ExpectError(const Status& status, Code code, std::initializer_list<const char*> fragments) {
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), code) << status.ToString();
    for (const char* f : fragments) EXPECT_NE(status.message().find(f), std::string::npos) << status.message();
    EXPECT_EQ(status.message().find(kSecret), std::string::npos) << status.message();
  }

  // The passphrase `json` opens to under `id` with the secret, as a Node
  // unwraps it; "" (and a failure) when it does not open.
  std::string ExpectOpens(const std::string& json, const std::string& id) const {
    auto opened = UnwrapVolumePassphrase(json, secret_, id);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::string(opened->Reveal()) : "";
  }

  std::string dir_;
  std::shared_ptr<FakeImageMetadata> metadata_ = std::make_shared<FakeImageMetadata>();
  SecretBytes secret_ = SecretBytes::CopyOf(kSecret);
};

}  // namespace nbdk::test
