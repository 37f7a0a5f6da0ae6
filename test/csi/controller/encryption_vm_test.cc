// Encrypted volumes through nbdkeeperd's Controller against the VM's real
// Ceph (issue 28, the Controller's half): what CreateVolume, CreateSnapshot,
// a restore and a clone leave in ceph-csi's image metadata and omap keys,
// each key opened as a Node would, the codes of the refused combinations,
// and the secret in no log line. The Node's half:
// encryption_node_vm_test.cc and encryption_interchange_vm_test.cc.
#include <unistd.h>

#include <optional>
#include <string>

#include "test/csi/controller/encryption_vm_fixture.h"

namespace nbdk::vmtest {
namespace {

TEST_F(EncryptionVmTest, AMetadataKmsVolumeHasCephCsisKeysAndARepeatKeepsThem) {
  const std::string name = "pvc-enc-" + std::to_string(::getpid());
  csi::v1::CreateVolumeResponse created, again;
  ASSERT_GRPC_OK(CreateEncrypted(name, kMetadataKms, &created));
  const std::string id = created.volume().volume_id(), image = ImageOf(id);
  const auto& ctx = created.volume().volume_context();
  EXPECT_EQ(ctx.at("encrypted"), "true");
  EXPECT_EQ(ctx.at("encryptionType"), "block");
  EXPECT_EQ(ctx.at("encryptionKMSID"), kMetadataKms);
  auto omap = AllOmap(*io_, "csi.volume." + DecodeVolumeId(id)->object_uuid);
  ASSERT_TRUE(omap);
  EXPECT_EQ((*omap)["csi.volume.encryptKMS"], kMetadataKms);
  EXPECT_EQ((*omap)["csi.volume.encryptionType"], "block");
  EXPECT_EQ(Meta(image, kState), std::optional<std::string>("encryptionPrepared"));
  const std::string passphrase = Passphrase(image, id);
  EXPECT_EQ(passphrase.size(), kVolumePassphraseLength);
  const auto dek = Meta(image, kDek);

  ASSERT_GRPC_OK(CreateEncrypted(name, kMetadataKms, &again));
  EXPECT_EQ(again.volume().volume_id(), id);
  EXPECT_EQ(Meta(image, kDek), dek) << "a repeat made another key";
  for (const std::optional<std::string>& other : {std::optional<std::string>(), std::optional<std::string>("")}) {
    csi::v1::CreateVolumeResponse resp;
    grpc::Status s = CreateEncrypted(name, other, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS) << s.error_message();
  }
  ASSERT_GRPC_OK(Delete(id));
  EXPECT_FALSE(ImageExists(*io_, image));
  EXPECT_EQ(Daemon().Log().find(kSecret), std::string::npos) << "the secret is in the daemon's log";
  EXPECT_EQ(Daemon().Log().find(passphrase), std::string::npos) << "a passphrase is in the daemon's log";
}

TEST_F(EncryptionVmTest, ADefaultKmsVolumeStoresNoKey) {
  csi::v1::CreateVolumeResponse created;
  ASSERT_GRPC_OK(CreateEncrypted("pvc-enc-default-" + std::to_string(::getpid()), "", &created));
  const std::string image = ImageOf(created.volume().volume_id());
  EXPECT_EQ(Meta(image, kState), std::optional<std::string>("encryptionPrepared"));
  EXPECT_EQ(Meta(image, kDek), std::nullopt);
  EXPECT_EQ(created.volume().volume_context().at("encryptionKMSID"), "default");
  ASSERT_GRPC_OK(Delete(created.volume().volume_id()));
}

// A snapshot, a restore and a clone each open under their own ID with the
// source's passphrase; ceph-csi's refusals of an encryption change.
TEST_F(EncryptionVmTest, SnapshotsRestoresAndClonesReWrapTheSourcesKey) {
  const std::string tag = std::to_string(::getpid());
  csi::v1::CreateVolumeResponse source, restored, cloned, plain, refused;
  ASSERT_GRPC_OK(CreateEncrypted("pvc-enc-src-" + tag, kMetadataKms, &source));
  const std::string source_id = source.volume().volume_id();
  const std::string passphrase = Passphrase(ImageOf(source_id), source_id);
  ASSERT_TRUE(SetImageMetadata(*io_, ImageOf(source_id), {{kState, "encrypted"}}).ok());  // as a Node's format

  csi::v1::CreateSnapshotResponse snap;
  ASSERT_GRPC_OK(Snapshot("snap-enc-" + tag, source_id, &snap));
  const std::string snap_id = snap.snapshot().snapshot_id(), snap_image = ImageOf(snap_id, "csi-snap-");
  EXPECT_EQ(Passphrase(snap_image, snap_id), passphrase);
  EXPECT_EQ(Meta(snap_image, kState), std::optional<std::string>("encrypted"));
  auto snap_omap = AllOmap(*io_, "csi.snap." + DecodeVolumeId(snap_id)->object_uuid);
  ASSERT_TRUE(snap_omap);
  EXPECT_EQ((*snap_omap)["csi.volume.encryptKMS"], kMetadataKms);

  ASSERT_GRPC_OK(CreateEncrypted("pvc-enc-restore-" + tag, kMetadataKms, &restored, snap_id));
  const std::string restored_id = restored.volume().volume_id();
  EXPECT_EQ(Passphrase(ImageOf(restored_id), restored_id), passphrase);
  EXPECT_EQ(Meta(ImageOf(restored_id), kState), std::optional<std::string>("encrypted"));
  ASSERT_GRPC_OK(CreateEncrypted("pvc-enc-clone-" + tag, kMetadataKms, &cloned, "", source_id));
  const std::string cloned_id = cloned.volume().volume_id();
  EXPECT_EQ(Passphrase(ImageOf(cloned_id), cloned_id), passphrase);

  grpc::Status s = CreateEncrypted("pvc-plain-restore-" + tag, std::nullopt, &refused, snap_id);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  ASSERT_GRPC_OK(CreateEncrypted("pvc-plain-" + tag, std::nullopt, &plain));
  s = CreateEncrypted("pvc-enc-of-plain-" + tag, kMetadataKms, &refused, "", plain.volume().volume_id());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  s = CreateEncrypted("pvc-default-of-metadata-" + tag, "", &refused, "", source_id);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();

  for (const std::string& id : {cloned_id, restored_id, plain.volume().volume_id()}) ASSERT_GRPC_OK(Delete(id));
  ASSERT_GRPC_OK(DeleteSnapshot(snap_id));
  ASSERT_GRPC_OK(Delete(source_id));
  EXPECT_EQ(Daemon().Log().find(kSecret), std::string::npos) << "the secret is in the daemon's log";
}

}  // namespace
}  // namespace nbdk::vmtest
