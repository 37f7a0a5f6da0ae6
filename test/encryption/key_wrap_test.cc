// The metadata KMS's key wrap against fixed vectors from an independent
// tool: test/encryption/key_wrap_vectors.py (Python's hashlib.scrypt and
// python3-cryptography's AESGCM, following ceph-csi's secretskms.go). Each
// wrap or unwrap runs scrypt (32 MiB): the suite takes a few seconds.
#include "encryption/key_wrap.h"

#include <gtest/gtest.h>

#include <string>

namespace nbdk {
namespace {

constexpr std::string_view kEncryptionPassphrase = "my-passphrase-from-kubernetes";
constexpr std::string_view kVolumeId = "0001-0009-rook-ceph-0000000000000002-1b00f5f8-b1c1-11e9-8421-9243c1f659f0";
constexpr std::string_view kPassphrase = "4OHi4-Tl5ufo6err7O3u7_Dx8vM=";
constexpr std::string_view kWrapped =
    R"({"dek":"5eWWCLPIaDGY4sblVlKUb9yjEO/TbR3bT6kkUUdV1AI/UoQTljceFRob5l4=","nonce":"AAECAwQFBgcICQoL"})";

SecretBytes Secret(std::string_view s) { return SecretBytes::CopyOf(s); }

Result<SecretBytes> Unwrap(std::string_view json, std::string_view encryption_passphrase = kEncryptionPassphrase,
                           std::string_view volume_id = kVolumeId) {
  return UnwrapVolumePassphrase(json, Secret(encryption_passphrase), volume_id);
}

// An error that names what is wrong and shows no secret.
void ExpectError(const Status& status, Code code, std::string_view mentions) {
  EXPECT_EQ(status.code(), code) << status.ToString();
  EXPECT_NE(status.message().find(mentions), std::string::npos) << status.message() << " should mention " << mentions;
  EXPECT_EQ(status.message().find(kEncryptionPassphrase), std::string::npos) << status.message();
  EXPECT_EQ(status.message().find(kPassphrase), std::string::npos) << status.message();
}

TEST(KeyWrapTest, UnwrapsTheIndependentToolsVector) {
  auto passphrase = Unwrap(kWrapped);
  ASSERT_TRUE(passphrase.ok()) << passphrase.status().ToString();
  EXPECT_EQ(passphrase->Reveal(), kPassphrase);
}

TEST(KeyWrapTest, WritesJsonByteForByteAsGoEncodingJson) {
  auto parsed = ParseWrappedKey(kWrapped);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->nonce, std::string("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b", 12));
  EXPECT_EQ(parsed->sealed.size(), kPassphrase.size() + kWrapTagBytes);  // Seal appends the tag
  EXPECT_EQ(EncodeWrappedKey(*parsed), kWrapped);                        // '/' unescaped, compact, dek first
}

TEST(KeyWrapTest, AWrongEncryptionPassphraseOrVolumeIdFailsAuthentication) {
  ExpectError(Unwrap(kWrapped, "my-passphrase-from-kubernetez").status(), Code::kInvalidArgument,
              "authentication failed");
  ExpectError(Unwrap(kWrapped, kEncryptionPassphrase, "0001-0009-rook-ceph-0000000000000002-other").status(),
              Code::kInvalidArgument, "authentication failed");
}

TEST(KeyWrapTest, AnAlteredDekOrNonceFailsAuthentication) {
  std::string dek(kWrapped);
  dek[8] = '6';  // first character of "dek"'s base64
  ExpectError(Unwrap(dek).status(), Code::kInvalidArgument, "authentication failed");
  std::string nonce(kWrapped);
  nonce[nonce.find("AAEC")] = 'B';
  ExpectError(Unwrap(nonce).status(), Code::kInvalidArgument, "authentication failed");
}

TEST(KeyWrapTest, RefusesMalformedTextByName) {
  ExpectError(Unwrap("{\"dek\":").status(), Code::kCorruption, "wrapped key: invalid JSON at offset 7");
  ExpectError(Unwrap("[]").status(), Code::kCorruption, "expected a JSON object");
  ExpectError(Unwrap(R"({"nonce":"AAECAwQFBgcICQoL"})").status(), Code::kCorruption, "wrapped key: dek: missing");
  ExpectError(Unwrap(R"({"dek":null,"nonce":"AAECAwQFBgcICQoL"})").status(), Code::kCorruption, "dek: missing");
  ExpectError(Unwrap(R"({"dek":7,"nonce":"AAECAwQFBgcICQoL"})").status(), Code::kCorruption,
              "dek: expected a base64 string");
  ExpectError(Unwrap(R"({"dek":"5eWW-LPI","nonce":"AAECAwQFBgcICQoL"})").status(), Code::kCorruption,
              "dek: not base64 at offset 4");
  ExpectError(Unwrap(R"({"dek":"5eWWCLPIaDGY4sblVlKUb9yjEO/TbR3b","nonce":"AAECAwQF"})").status(), Code::kCorruption,
              "nonce: 6 bytes, not 12");
  ExpectError(Unwrap(R"({"dek":"5eWW","nonce":"AAECAwQFBgcICQoL"})").status(), Code::kCorruption,
              "dek: 3 bytes, shorter than its 16-byte GCM tag");
  ExpectError(Unwrap(std::string(kMaxWrappedKeyJsonBytes + 1, ' ')).status(), Code::kCorruption,
              "4097 bytes, more than 4096");
}

TEST(KeyWrapTest, ReadsNamesAsGoDoes) {
  // Any case, the last duplicate, other members ignored.
  std::string text = R"({"DEK":"AAAA","Dek":"5eWWCLPIaDGY4sblVlKUb9yjEO/TbR3bT6kkUUdV1AI/UoQTljceFRob5l4=",)"
                     R"("Nonce":"AAECAwQFBgcICQoL","other":[1,2]})";
  auto passphrase = Unwrap(text);
  ASSERT_TRUE(passphrase.ok()) << passphrase.status().ToString();
  EXPECT_EQ(passphrase->Reveal(), kPassphrase);
}

TEST(KeyWrapTest, WrapThenUnwrapRoundTripsWithANewNonceEachTime) {
  auto first = WrapVolumePassphrase(Secret(kPassphrase), Secret(kEncryptionPassphrase), kVolumeId);
  auto second = WrapVolumePassphrase(Secret(kPassphrase), Secret(kEncryptionPassphrase), kVolumeId);
  ASSERT_TRUE(first.ok() && second.ok()) << first.status().ToString() << second.status().ToString();
  EXPECT_NE(*first, *second);
  EXPECT_EQ(first->find(kPassphrase), std::string::npos);
  for (const std::string& text : {*first, *second}) {
    auto parsed = ParseWrappedKey(text);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(EncodeWrappedKey(*parsed), text);
    auto passphrase = Unwrap(text);
    ASSERT_TRUE(passphrase.ok()) << passphrase.status().ToString();
    EXPECT_EQ(passphrase->Reveal(), kPassphrase);
  }
  // A clone's copy is wrapped under its own volume ID: the source's does not open it.
  auto clone = WrapVolumePassphrase(Secret(kPassphrase), Secret(kEncryptionPassphrase), "clone-volume-id");
  ASSERT_TRUE(clone.ok());
  ExpectError(Unwrap(*clone).status(), Code::kInvalidArgument, "authentication failed");
}

TEST(KeyWrapTest, RefusesAnEmptyVolumeIdAndAnOverlongPassphrase) {
  ExpectError(WrapVolumePassphrase(Secret(kPassphrase), Secret(kEncryptionPassphrase), "").status(),
              Code::kInvalidArgument, "the volume ID is empty");
  ExpectError(Unwrap(kWrapped, kEncryptionPassphrase, "").status(), Code::kInvalidArgument, "the volume ID is empty");
  SecretBytes overlong = SecretBytes::Zeroed(kMaxWrappablePassphraseBytes + 1);
  ExpectError(WrapVolumePassphrase(overlong, Secret(kEncryptionPassphrase), kVolumeId).status(), Code::kInvalidArgument,
              "1025 bytes, more than 1024");
  SecretBytes longest = SecretBytes::Zeroed(kMaxWrappablePassphraseBytes);
  auto wrapped = WrapVolumePassphrase(longest, Secret(kEncryptionPassphrase), kVolumeId);
  ASSERT_TRUE(wrapped.ok());
  EXPECT_TRUE(ParseWrappedKey(*wrapped).ok());
}

}  // namespace
}  // namespace nbdk
