// Encrypted volumes interchanged with ceph-csi (issue 28), both KMS types,
// in the VM. (a) A volume made exactly as ceph-csi makes one - its omap
// object planted with librados, its image by `rbd create`, its state and
// key by `rbd image-meta`, the key wrapped by an independent tool
// (ceph_csi_dek.py), LUKS2 by the `cryptsetup` CLI with ceph-csi's
// arguments on an `rbd device map -t nbd`, ext4 by ceph-csi's mkfs options,
// a file written through it - is staged by nbdkeeper from its ceph-csi
// volume ID and volume context, and reads back. A ceph-csi volume ID
// rather than a static volume: ceph-csi's node never formats a static
// volume, and the metadata KMS salts with the volume ID, which this makes
// a real ceph-csi one. (b) A volume nbdkeeper created, formatted and wrote
// is opened by the `cryptsetup` CLI with the passphrase the independent
// tool unwraps (the metadata KMS) or the encryptionPassphrase itself (the
// default KMS), after its header is checked for ceph-csi's LUKS2 choices.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>

#include "test/csi/ceph_csi_layout.h"
#include "test/csi/controller/ceph_csi_node_tools.h"
#include "test/csi/controller/encryption_vm_fixture.h"

namespace nbdk::vmtest {
namespace {

class EncryptionInterchangeVmTest : public EncryptionVmTest {
 protected:
  // ceph-csi's volume passphrase for `volume_id` in a file of `dir`: the
  // encryptionPassphrase itself for the default KMS (""), the metadata
  // KMS's: a new one whose wrap is stored in `image`'s metadata
  // (`wrap`) or the one unwrapped from it (not `wrap`).
  std::string PassphraseFile(const ScratchDir& dir, const std::string& kms_id, const std::string& image,
                             const std::string& volume_id, bool wrap) {
    const std::string secret = dir.WriteSecret("encryptionPassphrase", kSecret);
    EXPECT_FALSE(secret.empty()) << "cannot write in " << dir.path();
    if (kms_id.empty()) return secret;
    const std::string passphrase = dir.path() + "/passphrase";
    if (wrap) {
      Status made = NewCephCsiPassphrase(passphrase);
      EXPECT_TRUE(made.ok()) << made.ToString();
      auto json = WrapWithPython(secret, volume_id, passphrase);
      Status stored = json.ok() ? SetImageMetaCli(image, kDek, *json) : json.status();
      EXPECT_TRUE(stored.ok()) << stored.ToString();
    } else {
      auto json = GetImageMetaCli(image, kDek);
      EXPECT_TRUE(json.ok()) << json.status().ToString();
      Status opened = json.ok() ? UnwrapWithPython(secret, volume_id, *json, passphrase) : json.status();
      EXPECT_TRUE(opened.ok()) << opened.ToString();
      std::error_code ec;
      EXPECT_EQ(std::filesystem::file_size(passphrase, ec), 28u) << "not ceph-csi's 20 bytes in base64";
    }
    return passphrase;
  }

  // (a), see the file's comment.
  void StageWhatCephCsiEncrypted(const std::string& kms_id) {
    char uuid[37];
    std::snprintf(uuid, sizeof(uuid), "ce9c5100-0000-4000-8000-%012x",
                  static_cast<unsigned>(::getpid()) * 2 + (kms_id.empty() ? 0u : 1u));
    const std::string image = std::string("csi-vol-") + uuid;
    const std::string id = EncodeVolumeId({1, "test", rados_ioctx_get_id(io_->get()), uuid});
    CreateImage(image, 64);
    Status planted = PlantCephCsiVolume(*io_, uuid,
                                        {{"csi.volname", "pvc-cephcsi-" + std::string(uuid)},
                                         {"csi.imagename", image},
                                         {"csi.volume.encryptKMS", kms_id.empty() ? "default" : kms_id},
                                         {"csi.volume.encryptionType", "block"}});
    ASSERT_TRUE(planted.ok()) << planted.ToString();
    ASSERT_TRUE(SetImageMetaCli(image, kState, "encryptionPrepared").ok());
    {
      ScratchDir dir;
      const std::string passphrase = PassphraseFile(dir, kms_id, image, id, true);
      ASSERT_FALSE(HasFailure());
      CliNbdMap map(image);
      ASSERT_TRUE(map.status().ok()) << map.status().ToString();
      Status formatted = CephCsiLuksFormat(map.device(), passphrase);
      ASSERT_TRUE(formatted.ok()) << formatted.ToString();
      ASSERT_TRUE(SetImageMetaCli(image, kState, "encrypted").ok());
      CliLuksMapper mapper(map.device(), MapperName(id), passphrase);
      ASSERT_TRUE(mapper.status().ok()) << mapper.status().ToString();
      std::optional<MapperView> view = FindMapper(MapperName(id));
      ASSERT_TRUE(view);
      Status made = CephCsiMkfsExt4("/dev/" + view->dm);
      ASSERT_TRUE(made.ok()) << made.ToString();
      Ext4Mount mount("/dev/" + view->dm, dir.path() + "/mnt", false);
      ASSERT_TRUE(mount.status().ok()) << mount.status().ToString();
      ASSERT_TRUE(WriteKnown(dir.path() + "/mnt/known.bin").ok());
    }
    EXPECT_EQ(MappersNamed("luks-rbd-"), std::vector<std::string>{}) << "the CLI's mapper is closed";

    // What ceph-csi's CreateVolume returns as the volume context.
    csi::v1::Volume volume;
    volume.set_volume_id(id);
    auto& ctx = *volume.mutable_volume_context();
    ctx["clusterID"] = "test";
    ctx["pool"] = Ceph().pool;
    ctx["imageName"] = image;
    ctx["encrypted"] = "true";
    if (!kms_id.empty()) ctx["encryptionKMSID"] = kms_id;
    const auto cap = MountCap("ext4");
    ASSERT_GRPC_OK(Stage(EncryptedStageReq(volume, cap)));
    const std::string device = StatusField(id, "device");
    EXPECT_TRUE(ExpectOpenOnItsDevice(id, false));
    Status data = ExpectKnown(StagedPath(id) + "/known.bin");
    EXPECT_TRUE(data.ok()) << data.ToString();
    EXPECT_EQ(Meta(image, kState), std::optional<std::string>("encrypted"));
    ASSERT_GRPC_OK(Unstage(id));
    ExpectClosedAndUnmapped(id, image, device);
    EXPECT_TRUE(RemoveImage(Ceph(), image).ok());
    EXPECT_TRUE(RemoveCephCsiVolume(*io_, uuid).ok());
  }

  // (b), see the file's comment.
  void OpenWhatNbdkeeperEncrypted(const std::string& kms_id) {
    const auto cap = MountCap("ext4");
    csi::v1::CreateVolumeResponse created;
    ASSERT_GRPC_OK(CreateEncrypted("pvc-enc-tocli-" + std::to_string(::getpid()) + (kms_id.empty() ? "-d" : "-m"),
                                   kms_id, &created, "", "", 64 * kMiB, cap));
    const std::string id = created.volume().volume_id(), image = ImageOf(id);
    ASSERT_GRPC_OK(Stage(EncryptedStageReq(created.volume(), cap)));
    ASSERT_TRUE(WriteKnown(StagedPath(id) + "/known.bin").ok());
    ASSERT_GRPC_OK(Unstage(id));
    {
      ScratchDir dir;
      const std::string passphrase = PassphraseFile(dir, kms_id, image, id, false);
      ASSERT_FALSE(HasFailure());
      CliNbdMap map(image);
      ASSERT_TRUE(map.status().ok()) << map.status().ToString();
      auto dump = LuksDumpCli(map.device());
      ASSERT_TRUE(dump.ok()) << dump.status().ToString();
      // What `cryptsetup luksFormat` with ceph-csi's arguments makes (the
      // Argon2 costs are benchmarked, so they vary), in the dump's lines
      // with each run of blanks made one space.
      const std::string lines = std::regex_replace(*dump, std::regex("[ \t]+"), " ");
      for (const char* line : {"\nVersion: 2\n", " cipher: aes-xts-plain64\n", " Cipher key: 512 bits\n",
                               " PBKDF: argon2id\n", " AF hash: sha256\n", " Hash: sha256\n"}) {
        EXPECT_NE(lines.find(line), std::string::npos) << "no '" << line << "' in\n" << *dump;
      }
      CliLuksMapper mapper(map.device(), MapperName(id), passphrase);
      ASSERT_TRUE(mapper.status().ok()) << mapper.status().ToString();
      std::optional<MapperView> view = FindMapper(MapperName(id));
      ASSERT_TRUE(view);
      Ext4Mount mount("/dev/" + view->dm, dir.path() + "/mnt", true);
      ASSERT_TRUE(mount.status().ok()) << mount.status().ToString();
      Status data = ExpectKnown(dir.path() + "/mnt/known.bin");
      EXPECT_TRUE(data.ok()) << data.ToString();
    }
    EXPECT_EQ(MappersNamed("luks-rbd-"), std::vector<std::string>{}) << "the CLI's mapper is closed";
    ASSERT_GRPC_OK(Delete(id));
  }
};

TEST_F(EncryptionInterchangeVmTest, NbdkeeperStagesWhatCephCsiEncryptedWithTheMetadataKms) {
  StageWhatCephCsiEncrypted(kMetadataKms);
}

TEST_F(EncryptionInterchangeVmTest, NbdkeeperStagesWhatCephCsiEncryptedWithTheDefaultKms) {
  StageWhatCephCsiEncrypted("");
}

TEST_F(EncryptionInterchangeVmTest, CryptsetupOpensWhatNbdkeeperEncryptedWithTheMetadataKms) {
  OpenWhatNbdkeeperEncrypted(kMetadataKms);
}

TEST_F(EncryptionInterchangeVmTest, CryptsetupOpensWhatNbdkeeperEncryptedWithTheDefaultKms) {
  OpenWhatNbdkeeperEncrypted("");
}

}  // namespace
}  // namespace nbdk::vmtest
