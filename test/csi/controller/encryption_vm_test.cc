// Encrypted volumes through nbdkeeperd's Controller against the VM's real
// Ceph (issue 28, the Controller's half): what CreateVolume, CreateSnapshot,
// a restore and a clone leave in ceph-csi's image metadata and omap keys,
// each key opened as a Node would, the codes of the refused combinations,
// the expansion's answer, the Node's refusal on this branch, and the
// secret in no log line. The VM's daemon reads a KMS config with a
// metadata KMS (test/csi/vm_node.cc).
#include <unistd.h>

#include <map>
#include <optional>
#include <string>

#include "ceph/rbd_image.h"
#include "encryption/key_wrap.h"
#include "journal/volume_id.h"
#include "test/csi/controller/controller_vm_fixture.h"
#include "test/csi/controller/controller_vm_helpers.h"

namespace nbdk::vmtest {
namespace {

constexpr int64_t kMiB = 1 << 20;
constexpr char kSecret[] = "SECRET-vm-encryptionPassphrase-61f0";
constexpr char kDek[] = "rbd.csi.ceph.com/dek";
constexpr char kState[] = "rbd.csi.ceph.com/encrypted";

class EncryptionVmTest : public ControllerVmTest {
 protected:
  template <typename Request>
  static void EncryptedSecrets(Request* r) {
    Secrets(r);
    (*r->mutable_secrets())["encryptionPassphrase"] = kSecret;
  }

  // `kms_id`: nullopt, not encrypted; "": encrypted without encryptionKMSID.
  grpc::Status CreateEncrypted(const std::string& name, const std::optional<std::string>& kms_id,
                               csi::v1::CreateVolumeResponse* resp, const std::string& snapshot_id = "",
                               const std::string& volume_id = "") {
    csi::v1::CreateVolumeRequest req;
    req.set_name(name);
    req.mutable_capacity_range()->set_required_bytes(32 * kMiB);
    *req.add_volume_capabilities() = MountCap("ext4");
    auto& params = *req.mutable_parameters();
    params["clusterID"] = "test";
    params["pool"] = Ceph().pool;
    if (kms_id) params["encrypted"] = "true";
    if (kms_id && !kms_id->empty()) params["encryptionKMSID"] = *kms_id;
    if (!snapshot_id.empty()) req.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(snapshot_id);
    if (!volume_id.empty()) req.mutable_volume_content_source()->mutable_volume()->set_volume_id(volume_id);
    EncryptedSecrets(&req);
    grpc::ClientContext ctx;
    return controller_->CreateVolume(&ctx, req, resp);
  }

  grpc::Status Snapshot(const std::string& name, const std::string& source, csi::v1::CreateSnapshotResponse* resp) {
    csi::v1::CreateSnapshotRequest req;
    req.set_name(name);
    req.set_source_volume_id(source);
    EncryptedSecrets(&req);
    grpc::ClientContext ctx;
    return controller_->CreateSnapshot(&ctx, req, resp);
  }

  grpc::Status DeleteSnapshot(const std::string& id) {
    csi::v1::DeleteSnapshotRequest req;
    req.set_snapshot_id(id);
    Secrets(&req);
    grpc::ClientContext ctx;
    csi::v1::DeleteSnapshotResponse resp;
    return controller_->DeleteSnapshot(&ctx, req, &resp);
  }

  std::string ImageOf(const std::string& id, const char* prefix = "csi-vol-") {
    return prefix + DecodeVolumeId(id)->object_uuid;
  }

  std::optional<std::string> Meta(const std::string& image, const std::string& key) {
    auto value = GetImageMetadata(*io_, image, key);
    EXPECT_TRUE(value.ok()) << value.status().ToString();
    return value.ok() ? *value : std::nullopt;
  }

  // The passphrase `image`'s dek opens to under `id`, as a Node unwraps it.
  std::string Passphrase(const std::string& image, const std::string& id) {
    auto dek = Meta(image, kDek);
    EXPECT_TRUE(dek) << image << " has no " << kDek;
    if (!dek) return "";
    auto opened = UnwrapVolumePassphrase(*dek, SecretBytes::CopyOf(kSecret), id);
    EXPECT_TRUE(opened.ok()) << image << ": " << opened.status().ToString();
    return opened.ok() ? std::string(opened->Reveal()) : "";
  }
};

TEST_F(EncryptionVmTest, AMetadataKmsVolumeHasCephCsisKeysAndARepeatKeepsThem) {
  const std::string name = "pvc-enc-" + std::to_string(::getpid());
  csi::v1::CreateVolumeResponse created, again;
  ASSERT_GRPC_OK(CreateEncrypted(name, "secrets-metadata", &created));
  const std::string id = created.volume().volume_id(), image = ImageOf(id);
  const auto& ctx = created.volume().volume_context();
  EXPECT_EQ(ctx.at("encrypted"), "true");
  EXPECT_EQ(ctx.at("encryptionType"), "block");
  EXPECT_EQ(ctx.at("encryptionKMSID"), "secrets-metadata");
  auto omap = AllOmap(*io_, "csi.volume." + DecodeVolumeId(id)->object_uuid);
  ASSERT_TRUE(omap);
  EXPECT_EQ((*omap)["csi.volume.encryptKMS"], "secrets-metadata");
  EXPECT_EQ((*omap)["csi.volume.encryptionType"], "block");
  EXPECT_EQ(Meta(image, kState), std::optional<std::string>("encryptionPrepared"));
  const std::string passphrase = Passphrase(image, id);
  EXPECT_EQ(passphrase.size(), kVolumePassphraseLength);
  const auto dek = Meta(image, kDek);

  ASSERT_GRPC_OK(CreateEncrypted(name, "secrets-metadata", &again));
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
  ASSERT_GRPC_OK(CreateEncrypted("pvc-enc-src-" + tag, "secrets-metadata", &source));
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
  EXPECT_EQ((*snap_omap)["csi.volume.encryptKMS"], "secrets-metadata");

  ASSERT_GRPC_OK(CreateEncrypted("pvc-enc-restore-" + tag, "secrets-metadata", &restored, snap_id));
  const std::string restored_id = restored.volume().volume_id();
  EXPECT_EQ(Passphrase(ImageOf(restored_id), restored_id), passphrase);
  EXPECT_EQ(Meta(ImageOf(restored_id), kState), std::optional<std::string>("encrypted"));
  ASSERT_GRPC_OK(CreateEncrypted("pvc-enc-clone-" + tag, "secrets-metadata", &cloned, "", source_id));
  const std::string cloned_id = cloned.volume().volume_id();
  EXPECT_EQ(Passphrase(ImageOf(cloned_id), cloned_id), passphrase);

  grpc::Status s = CreateEncrypted("pvc-plain-restore-" + tag, std::nullopt, &refused, snap_id);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  ASSERT_GRPC_OK(CreateEncrypted("pvc-plain-" + tag, std::nullopt, &plain));
  s = CreateEncrypted("pvc-enc-of-plain-" + tag, "secrets-metadata", &refused, "", plain.volume().volume_id());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  s = CreateEncrypted("pvc-default-of-metadata-" + tag, "", &refused, "", source_id);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();

  for (const std::string& id : {cloned_id, restored_id, plain.volume().volume_id()}) ASSERT_GRPC_OK(Delete(id));
  ASSERT_GRPC_OK(DeleteSnapshot(snap_id));
  ASSERT_GRPC_OK(Delete(source_id));
  EXPECT_EQ(Daemon().Log().find(kSecret), std::string::npos) << "the secret is in the daemon's log";
}

// An encrypted block volume's LUKS mapper grows on the node (ceph-csi's
// answer); this branch's Node still refuses to stage an encrypted volume.
TEST_F(EncryptionVmTest, ExpansionAsksForTheNodeAndTheNodeRefusesToStageForNow) {
  csi::v1::CreateVolumeResponse created;
  ASSERT_GRPC_OK(CreateEncrypted("pvc-enc-expand-" + std::to_string(::getpid()), "", &created));
  const std::string id = created.volume().volume_id();
  csi::v1::ControllerExpandVolumeRequest expand;
  expand.set_volume_id(id);
  expand.mutable_capacity_range()->set_required_bytes(64 * kMiB);
  *expand.mutable_volume_capability() = BlockCap();
  Secrets(&expand);
  grpc::ClientContext ctx;
  csi::v1::ControllerExpandVolumeResponse grown;
  ASSERT_GRPC_OK(controller_->ControllerExpandVolume(&ctx, expand, &grown));
  EXPECT_EQ(grown.capacity_bytes(), 64 * kMiB);
  EXPECT_TRUE(grown.node_expansion_required());

  auto stage = StageReq(ImageOf(id), MountCap("ext4"));
  stage.set_volume_id(id);
  stage.mutable_volume_context()->erase("staticVolume");
  for (const auto& [k, v] : created.volume().volume_context()) (*stage.mutable_volume_context())[k] = v;
  (*stage.mutable_secrets())["encryptionPassphrase"] = kSecret;
  grpc::Status s = Stage(stage);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_NE(s.error_message().find("encrypted"), std::string::npos) << s.error_message();
  ASSERT_GRPC_OK(Delete(id));
}

}  // namespace
}  // namespace nbdk::vmtest
