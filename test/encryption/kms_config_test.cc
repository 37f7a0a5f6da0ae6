#include "encryption/kms_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace nbdk {
namespace {

// A file as ceph-csi's examples/kms/vault/kms-config.yaml holds them.
constexpr std::string_view kConfig = R"({
  "vault-test": {"encryptionKMSType": "vault", "vaultAddress": "http://vault:8200"},
  "vault-tokens-test": {"encryptionKMSType": "vaulttokens", "tenants": {"my-app": {"vaultCAVerify": "true"}}},
  "secrets-metadata-test": {"encryptionKMSType": "metadata"},
  "user-ns-secrets-metadata-test": {"encryptionKMSType": "metadata", "secretName": "storage-encryption-secret",
                                    "secretNamespace": "default"},
  "namespace-only-metadata": {"encryptionKMSType": "metadata", "secretNamespace": "default"},
  "legacy-metadata": {"KMS_PROVIDER": "metadata"},
  "kmip-test": {"KMS_PROVIDER": "kmip", "KMIP_ENDPOINT": "kmip:5696", "READ_TIMEOUT": 10},
  "secrets-default": {"encryptionKMSType": "default"},
  "both-names": {"encryptionKMSType": "metadata", "KMS_PROVIDER": "vault"},
  "twice": {"encryptionKMSType": "vault", "encryptionKMSType": "metadata"},
  "not-an-object": "metadata",
  "no-type": {"vaultAddress": "http://vault:8200"},
  "numeric-type": {"encryptionKMSType": 3},
  "null-type": {"encryptionKMSType": null},
  "unknown-type": {"encryptionKMSType": "my-own-kms\u001b[31m"}
})";

KmsConfig Config() {
  auto config = ParseKmsConfig(kConfig);
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return std::move(config).value();
}

void ExpectResolves(std::string_view kms_id, std::string_view settings_id, KmsType type) {
  auto settings = Config().Resolve(kms_id);
  ASSERT_TRUE(settings.ok()) << kms_id << ": " << settings.status().ToString();
  EXPECT_EQ(*settings, (KmsSettings{std::string(settings_id), type}));
}

void ExpectRefused(std::string_view kms_id, Code code, std::string_view mentions) {
  auto settings = Config().Resolve(kms_id);
  ASSERT_FALSE(settings.ok()) << kms_id;
  EXPECT_EQ(settings.status().code(), code) << settings.status().ToString();
  EXPECT_NE(settings.status().message().find(mentions), std::string::npos)
      << settings.status().message() << " should mention " << mentions;
}

TEST(KmsConfigTest, AnEmptyIdOrDefaultIsTheBuiltInSecretsKms) {
  ExpectResolves("", "default", KmsType::kDefault);
  ExpectResolves("default", "default", KmsType::kDefault);
  EXPECT_EQ(KmsTypeName(KmsType::kDefault), "default");
  EXPECT_EQ(KmsTypeName(KmsType::kMetadata), "metadata");
}

TEST(KmsConfigTest, ServesMetadataAndDefaultEntries) {
  ExpectResolves("secrets-metadata-test", "secrets-metadata-test", KmsType::kMetadata);
  ExpectResolves("namespace-only-metadata", "namespace-only-metadata", KmsType::kMetadata);
  ExpectResolves("legacy-metadata", "legacy-metadata", KmsType::kMetadata);
  ExpectResolves("secrets-default", "secrets-default", KmsType::kDefault);
  ExpectResolves("both-names", "both-names", KmsType::kMetadata);  // encryptionKMSType first, as ceph-csi
  ExpectResolves("twice", "twice", KmsType::kMetadata);            // the last one, as Go's map decoding
}

TEST(KmsConfigTest, RefusesEveryOtherCephCsiTypeByName) {
  ExpectRefused("vault-test", Code::kInvalidArgument,
                "KMS ID 'vault-test': encryptionKMSType 'vault': a ceph-csi KMS "
                "type nbdkeeper does not support");
  ExpectRefused("vault-tokens-test", Code::kInvalidArgument, "'vaulttokens'");
  ExpectRefused("kmip-test", Code::kInvalidArgument, "KMS_PROVIDER 'kmip'");
  for (std::string_view type : {"vault", "vaulttokens", "vaulttenantsa", "aws-metadata", "aws-sts-metadata", "azure-kv",
                                "ibmkeyprotect", "kmip"}) {
    std::string json = R"({"k": {"encryptionKMSType": ")" + std::string(type) + R"("}})";
    auto settings = ParseKmsConfig(json)->Resolve("k");
    ASSERT_FALSE(settings.ok()) << type;
    EXPECT_EQ(settings.status().code(), Code::kInvalidArgument);
    EXPECT_NE(settings.status().message().find("'" + std::string(type) + "'"), std::string::npos)
        << settings.status().message();
  }
  ExpectRefused("unknown-type", Code::kInvalidArgument,
                "encryptionKMSType 'my-own-kms\\x1b[31m': not a KMS type ceph-csi knows");
}

TEST(KmsConfigTest, RefusesAMetadataKmsThatReadsAKubernetesSecret) {
  ExpectRefused("user-ns-secrets-metadata-test", Code::kInvalidArgument,
                "put encryptionPassphrase in the StorageClass's secrets");
  ExpectRefused("user-ns-secrets-metadata-test", Code::kInvalidArgument, "no Kubernetes API");
}

TEST(KmsConfigTest, AMalformedEntryFailsOnlyWhenAsked) {
  ExpectRefused("not-an-object", Code::kFailedPrecondition, "KMS ID 'not-an-object': expected an object");
  ExpectRefused("no-type", Code::kFailedPrecondition, "neither encryptionKMSType nor KMS_PROVIDER is set");
  ExpectRefused("numeric-type", Code::kFailedPrecondition, "encryptionKMSType: expected a string");
  ExpectRefused("null-type", Code::kFailedPrecondition, "encryptionKMSType: expected a string");
  ExpectRefused("absent", Code::kFailedPrecondition, "KMS ID 'absent' is not in the KMS config");
}

TEST(KmsConfigTest, RefusesAMalformedFile) {
  for (std::string_view json : {"", "{", "[]", "\"metadata\"", "{\"a\": {}} trailing"}) {
    auto config = ParseKmsConfig(json);
    EXPECT_FALSE(config.ok()) << json;
    EXPECT_EQ(config.status().code(), Code::kInvalidArgument) << json;
  }
  std::string huge = "{\"k\": \"" + std::string(kMaxKmsConfigBytes, 'x') + "\"}";
  auto config = ParseKmsConfig(huge);
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("more than 1048576"), std::string::npos) << config.status().message();
}

class KmsConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kms-config-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/config.json";
  }
  void TearDown() override {
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
  }
  void Write(std::string_view text) { std::ofstream(path_) << text; }

  std::string dir_, path_;
};

TEST_F(KmsConfigFileTest, ReadsTheFileOnlyForANamedKms) {
  auto settings = ResolveKms("", path_);  // no file: not read
  ASSERT_TRUE(settings.ok()) << settings.status().ToString();
  EXPECT_EQ(settings->type, KmsType::kDefault);
  Write(kConfig);
  settings = ResolveKms("secrets-metadata-test", path_);
  ASSERT_TRUE(settings.ok()) << settings.status().ToString();
  EXPECT_EQ(settings->type, KmsType::kMetadata);
}

TEST_F(KmsConfigFileTest, AMissingOrBrokenFileIsTheNodesConfiguration) {
  auto settings = ResolveKms("secrets-metadata-test", path_);
  ASSERT_FALSE(settings.ok());
  EXPECT_EQ(settings.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(settings.status().message().find(path_), std::string::npos) << settings.status().message();
  EXPECT_NE(settings.status().message().find("no Kubernetes API"), std::string::npos) << settings.status().message();
  Write("{\"a\": ");
  settings = ResolveKms("a", path_);
  ASSERT_FALSE(settings.ok());
  EXPECT_EQ(settings.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(settings.status().message().find("KMS config " + path_ + ": invalid JSON"), std::string::npos)
      << settings.status().message();
}

}  // namespace
}  // namespace nbdk
