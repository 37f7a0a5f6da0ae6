// The encrypted-volume VM tests' fixture (issue 28): the Controller calls
// with ceph-csi's StorageClass parameters and the encryptionPassphrase, the
// image metadata they leave, and the Node's side - the stage request built
// from what CreateVolume returned, and the checks of an open and of a
// closed volume. The VM's daemon reads a KMS config with a metadata KMS,
// "secrets-metadata" (test/csi/vm_node.cc); no encryptionKMSID is the
// default KMS, whose passphrase is the encryptionPassphrase itself.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "ceph/rbd_image.h"
#include "encryption/key_wrap.h"
#include "journal/volume_id.h"
#include "test/csi/controller/controller_vm_fixture.h"
#include "test/csi/controller/controller_vm_helpers.h"
#include "test/csi/controller/encrypted_volume_view.h"

namespace nbdk::vmtest {

inline constexpr char kSecret[] = "SECRET-vm-encryptionPassphrase-61f0";
inline constexpr char kMetadataKms[] = "secrets-metadata";
inline constexpr char kDek[] = "rbd.csi.ceph.com/dek";
inline constexpr char kState[] = "rbd.csi.ceph.com/encrypted";

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
                               const std::string& volume_id = "", int64_t bytes = 32 * kMiB,
                               const csi::v1::VolumeCapability& cap = MountCap("ext4")) {
    csi::v1::CreateVolumeRequest req;
    req.set_name(name);
    req.mutable_capacity_range()->set_required_bytes(bytes);
    *req.add_volume_capabilities() = cap;
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

  static std::string ImageOf(const std::string& id, const char* prefix = "csi-vol-") {
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

  // ---- the Node's side ----

  // The NodeStage request of `volume` as CreateVolume returned it: its
  // volume context, the cephx secrets and the encryptionPassphrase, staged
  // at StagingPath(its ID).
  csi::v1::NodeStageVolumeRequest EncryptedStageReq(const csi::v1::Volume& volume,
                                                    const csi::v1::VolumeCapability& cap) {
    csi::v1::NodeStageVolumeRequest req = StageReq(volume.volume_id(), cap);
    req.mutable_volume_context()->clear();
    for (const auto& [k, v] : volume.volume_context()) (*req.mutable_volume_context())[k] = v;
    (*req.mutable_secrets())["encryptionPassphrase"] = kSecret;
    return req;
  }

  // Where a staged volume's data is: the mounted filesystem or the bound
  // mapper, <staging>/<volume ID>.
  static std::string StagedPath(const std::string& id) { return StagingPath(id) + "/" + id; }
  static std::string MapperName(const std::string& id) { return "luks-rbd-" + id; }

  // A staged encrypted volume, as the contract has it: the mapper
  // luks-rbd-<id> is open on the volume's own nbd device (its /status
  // "device"); /status, the node journal's record and the stash say so; the
  // staged path is the mapper (mounted, or bound for `block`). The mapper
  // (nullopt, and a failure, when it is not open).
  std::optional<MapperView> ExpectOpenOnItsDevice(const std::string& id, bool block) {
    const std::string name = MapperName(id), device = StatusField(id, "device");
    std::optional<MapperView> mapper = FindMapper(name);
    EXPECT_TRUE(mapper) << name << " is not open";
    if (!mapper) return std::nullopt;
    EXPECT_EQ(mapper->backing, std::vector<std::string>{std::filesystem::path(device).filename()})
        << name << " is not on the volume's device " << device;
    EXPECT_TRUE(std::filesystem::exists("/dev/mapper/" + name)) << "ceph-csi's path of the mapper";
    EXPECT_EQ(StatusField(id, "luks_mapper"), name) << StatusOf(id);
    auto record = JournalRecordJson(Root() + "/state/journal", id);
    EXPECT_TRUE(record.ok()) << record.status().ToString();
    if (record.ok()) {
      EXPECT_EQ(JsonString(*record, "luks_mapper"), name) << *record;
    }
    std::ifstream stash(StagingPath(id) + "/image-meta.json");
    EXPECT_TRUE(JsonTrue(std::string(std::istreambuf_iterator<char>(stash), {}), "encrypted"))
        << "the stash does not say encrypted";
    EXPECT_EQ(block ? BlockDeviceNumber(StagedPath(id)) : MountedDevice(StagedPath(id)), mapper->dev)
        << StagedPath(id) << " is not the mapper " << mapper->dev;
    return mapper;
  }

  // After NodeUnstage: no luks-rbd-* mapper open, the nbd device
  // `device` no longer configured, no rbd-nbd serving `image`, no /status
  // entry, no file naming the volume in the key dir.
  static void ExpectClosedAndUnmapped(const std::string& id, const std::string& image, const std::string& device) {
    EXPECT_EQ(MappersNamed("luks-rbd-"), std::vector<std::string>{});
    EXPECT_FALSE(std::filesystem::exists("/dev/mapper/" + MapperName(id)));
    EXPECT_FALSE(std::filesystem::exists("/sys/block/" + std::filesystem::path(device).filename().string() + "/pid"))
        << device << " is still connected";
    EXPECT_EQ(RbdNbdProcessesFor(image), 0);
    EXPECT_EQ(StatusOf(id), "");
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(Root() + "/keys", ec)) {
      EXPECT_EQ(e.path().filename().string().find(id), std::string::npos) << "left in the key dir: " << e.path();
    }
  }

  // SIGKILL of the daemon and a restart (its rbd-nbd serve on); the
  // Controller client follows it.
  void RestartDaemonAndReconnect() {
    RestartDaemon();
    controller_ =
        csi::v1::Controller::NewStub(grpc::CreateChannel(Daemon().endpoint(), grpc::InsecureChannelCredentials()));
  }
};

}  // namespace nbdk::vmtest
