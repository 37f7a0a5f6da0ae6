// VM test (real Ceph): a crash between any two RBD steps of CreateSnapshot,
// CreateVolume from a snapshot and CreateVolume from a volume, of a plain
// and of an encrypted source. For every k = 0..steps the state a crash
// after step k leaves is made (rbd_step_crash_fixture.h); then
//  - a retry through the public BLOCKING function must succeed with the
//    reserved ID and leave what a clean run leaves (images, parents,
//    snapshots, omap keys, the source's data; encrypted, the source's
//    passphrase wrapped under the new ID and the source's state);
//  - a delete of a second such state must leave nothing of it (no image, no
//    RBD trash entry, no snapshot on the source, no omap keys) and the
//    source intact.
//
// One connection for the whole binary; 8 MiB images.
#include "encryption/key_wrap.h"
#include "test/csi/controller/rbd_step_crash_fixture.h"

namespace nbdk::vmtest {
namespace {

class RbdStepCrashVmTest : public RbdStepCrashFixture {
 protected:
  // The source volume as the test made it: its data, no user snapshots.
  void ExpectSourceIntact(const CrashSource& src) {
    EXPECT_EQ(ReadImage(*io_, src.image, 0, data_.size()), data_) << "source data";
    EXPECT_EQ(ReadImage(*io_, src.image, kDataOffset, data_.size()), data_) << "source data";
    EXPECT_EQ(UserSnapshots(*io_, src.image), std::set<std::string>()) << "snapshots on " << src.image;
  }

  void ExpectData(const std::string& image) {
    EXPECT_EQ(ReadImage(*io_, image, 0, data_.size()), data_) << "data of " << image;
    EXPECT_EQ(ReadImage(*io_, image, kDataOffset, data_.size()), data_) << "data of " << image;
  }

  std::optional<std::string> Meta(const std::string& image, const std::string& key) {
    auto value = GetImageMetadata(*io_, image, key);
    EXPECT_TRUE(value.ok()) << value.status().ToString();
    return value.ok() ? *value : std::nullopt;
  }

  // `image` (ID `id`) opens with the encrypted source's passphrase and has
  // its state; made from a plain source, it has neither key.
  void ExpectEncryption(const CrashSource& src, const std::string& image, const std::string& id) {
    if (!src.kms_id) {
      EXPECT_EQ(Meta(image, kEncryptionStateKey), std::nullopt) << image;
      EXPECT_EQ(Meta(image, std::string(kWrappedKeyMetadataKey)), std::nullopt) << image;
      return;
    }
    const SecretBytes secret = SecretBytes::CopyOf(kCrashSecret);
    auto source_dek = Meta(src.image, std::string(kWrappedKeyMetadataKey));
    auto dek = Meta(image, std::string(kWrappedKeyMetadataKey));
    ASSERT_TRUE(source_dek && dek) << image;
    auto want = UnwrapVolumePassphrase(*source_dek, secret, src.volume_id);
    auto got = UnwrapVolumePassphrase(*dek, secret, id);
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    ASSERT_TRUE(got.ok()) << image << ": " << got.status().ToString();
    EXPECT_EQ(got->Reveal(), want->Reveal()) << image;
    EXPECT_EQ(Meta(image, kEncryptionStateKey), std::optional<std::string>("encrypted")) << image;
  }

  // The journal entry of `name` (one of the two journals) is `uuid`'s, or
  // (uuid "") there is none; an encrypted one records the KMS.
  void ExpectJournal(const JournalNames& names, const std::string& name, const std::string& uuid,
                     const std::optional<std::string>& kms_id = std::nullopt) {
    auto dir = AllOmap(*io_, DirectoryObject(names, kDefaultJournalInstance));
    auto object = AllOmap(*io_, JournalObject(names, uuid.empty() ? "x" : uuid));
    bool keyed = dir && dir->count(DirectoryKey(names, prefix_ + name));
    if (uuid.empty()) {
      EXPECT_FALSE(keyed) << "directory key of " << name << " left";
      return;
    }
    ASSERT_TRUE(keyed) << "no directory key of " << name;
    EXPECT_EQ(dir->at(DirectoryKey(names, prefix_ + name)), uuid);
    ASSERT_TRUE(object) << "no " << JournalObject(names, uuid);
    EXPECT_EQ(object->at(names.request_name_key), prefix_ + name);
    EXPECT_EQ((*object)[kEncryptKmsKey], kms_id.value_or(""));
    EXPECT_EQ((*object)[kEncryptionTypeKey], kms_id ? "block" : "");
  }

  // Nothing of `images` and of the journal entries of `name`/`uuid` is left.
  void ExpectGone(const CrashSource& src, const JournalNames& names, const std::string& name, const std::string& uuid,
                  const std::vector<std::string>& images) {
    std::set<std::string> trash = Trash(*io_);
    for (const std::string& image : images) {
      EXPECT_FALSE(ImageExists(*io_, image)) << image << " left";
      EXPECT_EQ(trash.count(image), 0u) << image << " left in the RBD trash";
    }
    ExpectJournal(names, name, "");
    EXPECT_FALSE(AllOmap(*io_, JournalObject(names, uuid))) << JournalObject(names, uuid) << " left";
    ExpectSourceIntact(src);
    EXPECT_EQ(Snapshots(*io_, src.image, false), src.snapshots) << "trashed snapshots on " << src.image;
  }

  void RetrySnapshot(const CrashSource& src, const std::string& name, size_t k, size_t* steps) {
    Crash crash = CrashAfter(Operation::kSnapshot, src, name, k);
    SCOPED_TRACE(crash.trace);
    *steps = crash.steps;
    const std::string image = crash.reservation.image_name;
    auto made = CreateSnapshotBlocking(cluster_, {prefix_ + name, Ref(src.volume_id, src.kms_id)}, "", CrashKms());
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    EXPECT_EQ(made->snapshot_id, crash.id);
    EXPECT_EQ(made->size_bytes, kSourceBytes);
    EXPECT_EQ(ParentName(*io_, image), src.image);
    EXPECT_EQ(UserSnapshots(*io_, image), std::set<std::string>{image});
    ExpectData(image);
    ExpectEncryption(src, image, crash.id);
    ExpectSourceIntact(src);
    ExpectJournal(kSnapshotJournalNames, name, crash.reservation.uuid, src.kms_id);
    auto attrs = AllOmap(*io_, JournalObject(kSnapshotJournalNames, crash.reservation.uuid));
    ASSERT_TRUE(attrs);
    EXPECT_EQ((*attrs)[kSourceKey], src.image);
    EXPECT_TRUE(DeleteSnapshotBlocking(cluster_, Ref(crash.id), "").ok());
    ExpectGone(src, kSnapshotJournalNames, name, crash.reservation.uuid, {image});
  }

  void DeleteSnapshot(const CrashSource& src, const std::string& name, size_t k) {
    Crash crash = CrashAfter(Operation::kSnapshot, src, name, k);
    SCOPED_TRACE(crash.trace);
    Status deleted = DeleteSnapshotBlocking(cluster_, Ref(crash.id), "");
    EXPECT_TRUE(deleted.ok()) << deleted.ToString();
    ExpectGone(src, kSnapshotJournalNames, name, crash.reservation.uuid, {crash.reservation.image_name});
  }

  void RetryVolume(Operation op, const CrashSource& src, const std::string& name, size_t k, size_t* steps) {
    Crash crash = CrashAfter(op, src, name, k);
    SCOPED_TRACE(crash.trace);
    *steps = crash.steps;
    const std::string image = crash.reservation.image_name;
    const std::string temp = TemporaryCloneName(image);
    auto made = CreateVolumeBlocking(cluster_, CloneParams(op, src, name), "", VolumeKms(src.kms_id), CrashKms());
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    EXPECT_EQ(made->volume_id, crash.id);
    auto size = ImageSize(*io_, image);
    EXPECT_TRUE(size.ok() && *size && **size == static_cast<uint64_t>(kCloneBytes)) << "size of " << image;
    EXPECT_EQ(UserSnapshots(*io_, image), std::set<std::string>());
    if (op == Operation::kRestore) {
      EXPECT_EQ(ParentName(*io_, image), SnapshotImage(src));
      EXPECT_FALSE(ImageExists(*io_, temp)) << temp;
    } else {
      EXPECT_EQ(ParentName(*io_, image), temp);
      EXPECT_EQ(ParentName(*io_, temp), src.image);
      EXPECT_EQ(UserSnapshots(*io_, temp), std::set<std::string>());
    }
    ExpectData(image);
    ExpectEncryption(src, image, crash.id);
    ExpectSourceIntact(src);
    ExpectJournal(kVolumeJournalNames, name, crash.reservation.uuid, src.kms_id);
    auto attrs = AllOmap(*io_, JournalObject(kVolumeJournalNames, crash.reservation.uuid));
    ASSERT_TRUE(attrs);
    EXPECT_EQ((*attrs)[kSourceKey], op == Operation::kClone ? src.volume_id : "");
    EXPECT_TRUE(DeleteVolumeBlocking(cluster_, Ref(crash.id), "").ok());
    ExpectGone(src, kVolumeJournalNames, name, crash.reservation.uuid, {image, temp});
  }

  void DeleteVolume(Operation op, const CrashSource& src, const std::string& name, size_t k) {
    Crash crash = CrashAfter(op, src, name, k);
    SCOPED_TRACE(crash.trace);
    const std::string image = crash.reservation.image_name;
    Status deleted = DeleteVolumeBlocking(cluster_, Ref(crash.id), "");
    EXPECT_TRUE(deleted.ok()) << deleted.ToString();
    ExpectGone(src, kVolumeJournalNames, name, crash.reservation.uuid, {image, TemporaryCloneName(image)});
    // The snapshot restored from still serves restores.
    EXPECT_EQ(UserSnapshots(*io_, SnapshotImage(src)), std::set<std::string>{SnapshotImage(src)});
  }

  void EveryCrashPoint(Operation op, const CrashSource& src) {
    size_t steps = 1;
    for (size_t k = 0; k <= steps; ++k) {
      const std::string name = std::string(OperationName(op)) + (src.kms_id ? "-encrypted-" : "-") + std::to_string(k);
      if (op == Operation::kSnapshot) {
        RetrySnapshot(src, name + "-retry", k, &steps);
        DeleteSnapshot(src, name + "-delete", k);
      } else {
        RetryVolume(op, src, name + "-retry", k, &steps);
        DeleteVolume(op, src, name + "-delete", k);
      }
    }
    EXPECT_GT(steps, 1u);
  }
};

TEST_F(RbdStepCrashVmTest, CreateSnapshot) { EveryCrashPoint(Operation::kSnapshot, plain_); }
TEST_F(RbdStepCrashVmTest, CreateVolumeFromSnapshot) { EveryCrashPoint(Operation::kRestore, plain_); }
TEST_F(RbdStepCrashVmTest, CreateVolumeFromVolume) { EveryCrashPoint(Operation::kClone, plain_); }
TEST_F(RbdStepCrashVmTest, CreateSnapshotOfAnEncryptedVolume) { EveryCrashPoint(Operation::kSnapshot, encrypted_); }
TEST_F(RbdStepCrashVmTest, CreateEncryptedVolumeFromSnapshot) { EveryCrashPoint(Operation::kRestore, encrypted_); }
TEST_F(RbdStepCrashVmTest, CreateEncryptedVolumeFromVolume) { EveryCrashPoint(Operation::kClone, encrypted_); }

}  // namespace
}  // namespace nbdk::vmtest
