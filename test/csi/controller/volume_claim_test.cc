// CreateVolume's rule of ownership (csi/controller/volume_claim.h) on the in-memory
// omap store and a set of image names standing in for the pool's images.
#include "csi/controller/volume_claim.h"

#include <gtest/gtest.h>

#include <set>

#include "ceph/omap_volume_keys.h"
#include "test/ceph/fake_omap_store.h"

namespace nbdk {
namespace {

constexpr char kUuid1[] = "11111111-1111-4111-8111-111111111111";
constexpr char kUuid2[] = "22222222-2222-4222-8222-222222222222";

struct Pool {
  FakeOmapStore store;
  std::set<std::string> images;
  std::vector<std::string> uuids{kUuid1, kUuid2};
  size_t next = 0;
  VolumeJournal journal{store, store, {5, 5}, "default", [this] { return uuids[next++ % uuids.size()]; }};

  Result<VolumeClaim> Claim(const CreateVolumeParams& params) {
    return ClaimVolumeName(journal, params,
                           [this](const std::string& image) -> Result<bool> { return images.count(image) > 0; });
  }
};

CreateVolumeParams Params(const std::string& name, const std::string& image) {
  CreateVolumeParams p;
  p.name = name;
  p.pool = "rbd";
  p.image_name = image;
  return p;
}

void ExpectAlreadyExistsNaming(const Result<VolumeClaim>& claim, const std::string& image) {
  ASSERT_FALSE(claim.ok());
  EXPECT_EQ(claim.status().code(), Code::kAlreadyExists) << claim.status().ToString();
  EXPECT_NE(claim.status().message().find("image " + image), std::string::npos) << claim.status().message();
}

TEST(VolumeClaim, AnImageNoReservationNamesIsNeverAdopted) {
  Pool pool;
  pool.images = {"db"};  // `rbd create db`, or another driver's
  ExpectAlreadyExistsNaming(pool.Claim(Params("nbdkeeperctl-rbd/db", "db")), "db");
  EXPECT_TRUE(pool.store.objects.empty()) << "an omap key was written";
  EXPECT_EQ(pool.images, std::set<std::string>{"db"});
}

TEST(VolumeClaim, AnImageAnotherNamesReservationNamesIsNeverAdopted) {
  Pool pool;
  auto first = pool.Claim(Params("pvc-a", "db"));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(first->fresh);
  pool.images.insert("db");  // pvc-a's CreateVolume made it
  const auto journal = pool.store.objects;

  ExpectAlreadyExistsNaming(pool.Claim(Params("pvc-b", "db")), "db");
  EXPECT_EQ(pool.store.objects, journal) << "pvc-b wrote omap keys";
}

TEST(VolumeClaim, ARepeatedCreateGetsItsOwnImageBack) {
  Pool pool;
  auto first = pool.Claim(Params("pvc-a", "db"));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  pool.images.insert("db");
  const auto journal = pool.store.objects;

  auto again = pool.Claim(Params("pvc-a", "db"));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->fresh);
  EXPECT_EQ(again->reservation, first->reservation);
  EXPECT_EQ(again->reservation.image_name, "db");
  EXPECT_EQ(pool.store.objects, journal);
}

TEST(VolumeClaim, ARepeatNamingAnotherImageIsAlreadyExists) {
  Pool pool;
  ASSERT_TRUE(pool.Claim(Params("pvc-a", "db")).ok());
  pool.images = {"db", "logs"};
  const auto journal = pool.store.objects;
  ExpectAlreadyExistsNaming(pool.Claim(Params("pvc-a", "logs")), "logs");
  EXPECT_EQ(pool.store.objects, journal);
}

TEST(VolumeClaim, ACloneOfAVolumeNeverAdoptsAnImageAsItsTemporaryClone) {
  Pool pool;
  pool.images = {"db-temp"};
  CreateVolumeParams clone = Params("pvc-clone", "db");
  clone.source.kind = ContentSource::Kind::kVolume;
  clone.source.id = "0001-0004-test-0000000000000005-" + std::string(kUuid2);
  ExpectAlreadyExistsNaming(pool.Claim(clone), "db-temp");
  EXPECT_TRUE(pool.store.objects.empty());
}

TEST(VolumeClaim, AFreeNameIsReservedForItsImage) {
  Pool pool;
  pool.images = {"other"};
  auto claim = pool.Claim(Params("pvc-a", "db"));
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  EXPECT_TRUE(claim->fresh);
  EXPECT_EQ(claim->reservation, (VolumeReservation{kUuid1, "db", "", {}}));
  EXPECT_EQ(pool.store.objects[VolumeObject(kUuid1)]["csi.imagename"], "db");

  // csi-vol-<uuid>: the uuid is new, no image is looked for.
  auto generated = ClaimVolumeName(pool.journal, Params("pvc-b", ""), [](const std::string& image) -> Result<bool> {
    ADD_FAILURE() << "looked for " << image;
    return false;
  });
  ASSERT_TRUE(generated.ok()) << generated.status().ToString();
  EXPECT_TRUE(generated->fresh);
  EXPECT_EQ(generated->reservation.image_name, DefaultImageName(kUuid2));
}

// ceph-csi records the encryption with the reservation and checks it on a
// repeat (its CheckReservation); the answer to another encryption is the
// CSI spec's ALREADY_EXISTS, with nothing changed.
TEST(VolumeClaim, AnEncryptedNameRecordsItsKmsAndARepeatMustAskTheSame) {
  Pool pool;
  CreateVolumeParams encrypted = Params("pvc-a", "");
  encrypted.encryption_kms_id = "secrets-metadata";
  auto claim = pool.Claim(encrypted);
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  EXPECT_EQ(claim->reservation.encryption, (JournalEncryption{"secrets-metadata", "block"}));
  EXPECT_EQ(pool.store.objects[VolumeObject(kUuid1)]["csi.volume.encryptKMS"], "secrets-metadata");
  EXPECT_EQ(pool.store.objects[VolumeObject(kUuid1)]["csi.volume.encryptionType"], "block");
  const auto journal = pool.store.objects;

  auto again = pool.Claim(encrypted);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->fresh);
  EXPECT_EQ(again->reservation, claim->reservation);

  CreateVolumeParams plain = Params("pvc-a", "");
  CreateVolumeParams other_kms = Params("pvc-a", "");
  other_kms.encryption_kms_id = "default";
  for (const CreateVolumeParams* repeat : {&plain, &other_kms}) {
    auto refused = pool.Claim(*repeat);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), Code::kAlreadyExists) << refused.status().ToString();
    EXPECT_NE(refused.status().message().find("KMS 'secrets-metadata'"), std::string::npos);
  }
  // An unencrypted name asked for again encrypted.
  ASSERT_TRUE(pool.Claim(Params("pvc-b", "")).ok());
  CreateVolumeParams now_encrypted = Params("pvc-b", "");
  now_encrypted.encryption_kms_id = "default";
  EXPECT_EQ(pool.Claim(now_encrypted).status().code(), Code::kAlreadyExists);
  pool.store.objects.erase(VolumeObject(kUuid2));
  pool.store.objects["csi.volumes.default"].erase("csi.volume.pvc-b");
  EXPECT_EQ(pool.store.objects, journal) << "a refused repeat wrote omap keys";
}

TEST(VolumeClaim, AFailedLookForTheImageReservesNothing) {
  Pool pool;
  auto claim = ClaimVolumeName(pool.journal, Params("pvc-a", "db"), [](const std::string&) -> Result<bool> {
    return Status::Unavailable("cluster timed out");
  });
  ASSERT_FALSE(claim.ok());
  EXPECT_EQ(claim.status().code(), Code::kUnavailable);
  EXPECT_TRUE(pool.store.objects.empty());
}

}  // namespace
}  // namespace nbdk
