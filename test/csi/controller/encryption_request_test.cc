// Encrypted CreateVolume and CreateSnapshot requests (csi/controller/controller_request.h):
// the parameters and the encryptionPassphrase secret as ceph-csi takes
// them, what the volume context tells the Node, and that the passphrase is
// never in a message.
#include <gtest/gtest.h>

#include "csi/controller/controller_request.h"
#include "csi/controller/snapshot_request.h"

namespace nbdk {
namespace {

using Mode = csi::v1::VolumeCapability::AccessMode;

constexpr char kKey[] = "AQBsecretKEYvalue0123456789abcdefghij==";
constexpr char kPassphrase[] = "PASSPHRASE-7f3a9c-never-printed";
constexpr char kVolumeId[] = "0001-0009-rook-ceph-0000000000000002-b0a3c3d5-1d1a-4a9e-9a8f-2d7e0d9b7d51";

csi::v1::CreateVolumeRequest EncryptedCreate() {
  csi::v1::CreateVolumeRequest r;
  r.set_name("pvc-enc");
  r.mutable_capacity_range()->set_required_bytes(10 * kMiB);
  auto* cap = r.add_volume_capabilities();
  cap->mutable_mount()->set_fs_type("ext4");
  cap->mutable_access_mode()->set_mode(Mode::SINGLE_NODE_WRITER);
  auto& params = *r.mutable_parameters();
  params["clusterID"] = "rook-ceph";
  params["pool"] = "rbd";
  params["encrypted"] = "true";
  auto& secrets = *r.mutable_secrets();
  secrets["userID"] = "csi-rbd-provisioner";
  secrets["userKey"] = kKey;
  secrets["encryptionPassphrase"] = kPassphrase;
  return r;
}

void ExpectInvalidNaming(const Status& s, const std::string& field) {
  ASSERT_FALSE(s.ok()) << field;
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find(field), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find(kPassphrase), std::string::npos) << s.message();
}

TEST(EncryptedCreateVolume, ParsesTheKmsIdAndKeepsThePassphraseByteForByte) {
  auto r = EncryptedCreate();
  (*r.mutable_secrets())["encryptionPassphrase"] = std::string(" ") + kPassphrase + "\n";
  auto p = ParseCreateVolumeRequest(r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->encryption_kms_id, std::optional<std::string>("default"));
  // Every byte is the secret: the default KMS's LUKS passphrase is it.
  EXPECT_EQ(p->secrets.encryption_passphrase.Reveal(), std::string(" ") + kPassphrase + "\n");

  (*r.mutable_parameters())["encryptionKMSID"] = "secrets-metadata";
  (*r.mutable_parameters())["encryptionType"] = "block";
  p = ParseCreateVolumeRequest(r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->encryption_kms_id, std::optional<std::string>("secrets-metadata"));
}

TEST(EncryptedCreateVolume, RefusalsNameTheFieldAndNeverThePassphrase) {
  auto missing = EncryptedCreate();
  missing.mutable_secrets()->erase("encryptionPassphrase");
  ExpectInvalidNaming(ParseCreateVolumeRequest(missing).status(), "secrets: encryptionPassphrase: missing");
  auto empty = EncryptedCreate();
  (*empty.mutable_secrets())["encryptionPassphrase"] = "";
  ExpectInvalidNaming(ParseCreateVolumeRequest(empty).status(), "secrets: encryptionPassphrase");
  auto file = EncryptedCreate();
  (*file.mutable_parameters())["encryptionType"] = "file";
  ExpectInvalidNaming(ParseCreateVolumeRequest(file).status(), "parameters.encryptionType");
  auto not_bool = EncryptedCreate();
  (*not_bool.mutable_parameters())["encrypted"] = "yes";
  ExpectInvalidNaming(ParseCreateVolumeRequest(not_bool).status(), "parameters.encrypted");
}

TEST(EncryptedCreateVolume, AnUnencryptedVolumeNeedsNoPassphraseAndIgnoresOne) {
  auto r = EncryptedCreate();
  (*r.mutable_parameters())["encrypted"] = "false";
  r.mutable_secrets()->erase("encryptionPassphrase");
  auto p = ParseCreateVolumeRequest(r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->encryption_kms_id, std::nullopt);
  EXPECT_TRUE(p->secrets.encryption_passphrase.empty());
  EXPECT_EQ(VolumeContextFor(*p, "csi-vol-x").count("encrypted"), 0u);
}

// ceph-csi's Node reads the encryption from the volume context
// (ParseEncryptionOpts on it): the Node of either driver finds it there.
TEST(EncryptedCreateVolume, TheVolumeContextSaysHowItIsEncrypted) {
  auto r = EncryptedCreate();
  (*r.mutable_parameters())["encrypted"] = "T";
  (*r.mutable_parameters())["encryptionKMSID"] = "secrets-metadata";
  auto p = ParseCreateVolumeRequest(r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto ctx = VolumeContextFor(*p, "csi-vol-x");
  EXPECT_EQ(ctx["encrypted"], "true");
  EXPECT_EQ(ctx["encryptionType"], "block");
  EXPECT_EQ(ctx["encryptionKMSID"], "secrets-metadata");
  for (const auto& [key, value] : ctx) EXPECT_EQ(value.find(kPassphrase), std::string::npos) << key;
}

// The snapshot re-wraps an encrypted source's key with the passphrase from
// the VolumeSnapshotClass's secrets.
TEST(EncryptedCreateSnapshot, CarriesThePassphraseWhenGiven) {
  csi::v1::CreateSnapshotRequest r;
  r.set_name("snap-enc");
  r.set_source_volume_id(kVolumeId);
  (*r.mutable_secrets())["userID"] = "csi-rbd-provisioner";
  (*r.mutable_secrets())["userKey"] = kKey;
  auto without = ParseCreateSnapshotRequest(r);
  ASSERT_TRUE(without.ok()) << without.status().ToString();
  EXPECT_TRUE(without->source.secrets.encryption_passphrase.empty());
  (*r.mutable_secrets())["encryptionPassphrase"] = kPassphrase;
  auto with = ParseCreateSnapshotRequest(r);
  ASSERT_TRUE(with.ok()) << with.status().ToString();
  EXPECT_EQ(with->source.secrets.encryption_passphrase.Reveal(), kPassphrase);
}

}  // namespace
}  // namespace nbdk
