#include "csi/controller/omap_volume_journal.h"

#include <gtest/gtest.h>

#include "ceph/omap_volume_keys.h"
#include "test/ceph/fake_omap_store.h"

namespace nbdk {
namespace {

constexpr char kName[] = "pvc-1b7e";
constexpr char kUuid1[] = "11111111-1111-4111-8111-111111111111";
constexpr char kUuid2[] = "22222222-2222-4222-8222-222222222222";
constexpr char kUuid3[] = "33333333-3333-4333-8333-333333333333";

TEST(RandomUuid, IsCanonicalAndFresh) {
  std::string a = RandomUuid(), b = RandomUuid();
  EXPECT_TRUE(IsCanonicalUuid(a)) << a;
  EXPECT_NE(a, b);
  EXPECT_EQ(a[14], '4');
}

// One pool (directory and volumes in one store) and a scripted uuid source.
struct Harness {
  FakeOmapStore store;
  std::vector<std::string> uuids{kUuid1, kUuid2, kUuid3};
  size_t next = 0;
  VolumeJournal journal{store, store, {5, 5}, "default", [this] { return uuids[next++ % uuids.size()]; }};

  Result<VolumeReservation> Create(const std::string& name) {
    auto found = journal.Lookup(name);
    if (!found.ok()) return found.status();
    if (*found) return **found;
    return journal.Reserve(name);
  }
};

TEST(VolumeJournal, ReserveWritesCephCsisKeys) {
  Harness h;
  auto r = h.Create(kName);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (VolumeReservation{kUuid1, DefaultImageName(kUuid1), "", {}}));
  std::map<std::string, OmapValues> want = {
      {"csi.volumes.default", {{"csi.volume.pvc-1b7e", kUuid1}}},
      {VolumeObject(kUuid1), {{"csi.volname", kName}, {"csi.imagename", DefaultImageName(kUuid1)}}}};
  EXPECT_EQ(h.store.objects, want);
  auto again = h.Create(kName);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *r);
  EXPECT_EQ(h.store.objects, want);
}

TEST(VolumeJournal, AnExactImageNameIsRecordedAsCephCsiRecordsAny) {
  Harness h;
  auto r = h.journal.Reserve(kName, "db-data");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->image_name, "db-data");
  EXPECT_EQ(h.store.objects[VolumeObject(kUuid1)]["csi.imagename"], "db-data");
  auto found = h.journal.Lookup(kName);
  ASSERT_TRUE(found.ok() && *found);
  EXPECT_EQ((*found)->image_name, "db-data");
}

TEST(VolumeJournal, ANamePrefixNamesTheImageAsCephCsisVolumeNamePrefix) {
  Harness h;
  auto r = h.journal.Reserve(kName, "", "", "k8s-vol-");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->image_name, "k8s-vol-" + std::string(kUuid1));
  EXPECT_EQ(h.store.objects[VolumeObject(kUuid1)]["csi.imagename"], r->image_name);
  auto found = h.journal.Lookup(kName);
  ASSERT_TRUE(found.ok() && *found);
  EXPECT_EQ(**found, *r);
}

TEST(VolumeJournal, ACloneRecordsItsSourceVolume) {
  Harness h;
  const std::string source = "0001-0004-test-0000000000000005-" + std::string(kUuid3);
  auto r = h.journal.Reserve(kName, "", source);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->source, source);
  EXPECT_EQ(h.store.objects[VolumeObject(kUuid1)]["csi.source"], source);
  auto attrs = ReadVolumeAttributes(h.store, kUuid1);
  ASSERT_TRUE(attrs.ok() && *attrs);
  EXPECT_EQ((*attrs)->source, source);
  auto found = h.journal.Lookup(kName);
  ASSERT_TRUE(found.ok() && *found);
  EXPECT_EQ((*found)->source, source);
}

// ceph-csi's ReserveName writes the KMS ID and type with the other keys.
TEST(VolumeJournal, AnEncryptedVolumeRecordsItsKmsAndTypeInTheSameWrite) {
  Harness h;
  const JournalEncryption encryption{"secrets-metadata", "block"};
  h.store.writes_left = 3;  // the exclusive create, the directory key, the per-volume keys
  auto r = h.journal.Reserve(kName, "", "", "", encryption);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->encryption, encryption);
  EXPECT_EQ(h.store.objects[VolumeObject(kUuid1)], (OmapValues{{"csi.volname", kName},
                                                               {"csi.imagename", DefaultImageName(kUuid1)},
                                                               {"csi.volume.encryptKMS", "secrets-metadata"},
                                                               {"csi.volume.encryptionType", "block"}}));
  auto found = h.journal.Lookup(kName);
  ASSERT_TRUE(found.ok() && *found);
  EXPECT_EQ(**found, *r);
  auto attrs = ReadVolumeAttributes(h.store, kUuid1);
  ASSERT_TRUE(attrs.ok() && *attrs);
  EXPECT_EQ((*attrs)->encryption, encryption);
}

TEST(VolumeJournal, AnUnencryptedVolumeRecordsNoEncryptionKeys) {
  Harness h;
  ASSERT_TRUE(h.journal.Reserve(kName).ok());
  EXPECT_FALSE(h.store.objects[VolumeObject(kUuid1)].count("csi.volume.encryptKMS"));
  EXPECT_FALSE(h.store.objects[VolumeObject(kUuid1)].count("csi.volume.encryptionType"));
  // A volume ceph-csi reserved before it recorded a type reads back without one.
  h.store.objects[VolumeObject(kUuid1)]["csi.volume.encryptKMS"] = "default";
  auto attrs = ReadVolumeAttributes(h.store, kUuid1);
  ASSERT_TRUE(attrs.ok() && *attrs);
  EXPECT_EQ((*attrs)->encryption, (JournalEncryption{"default", ""}));
}

TEST(VolumeJournal, SeparateJournalPoolWritesPoolIds) {
  FakeOmapStore dir, vols;
  VolumeJournal j(dir, vols, {3, 10}, "default", [] { return std::string(kUuid1); });
  ASSERT_TRUE(j.Reserve(kName).ok());
  EXPECT_EQ(dir.objects["csi.volumes.default"]["csi.volume.pvc-1b7e"], std::string("0000000000000003/") + kUuid1);
  EXPECT_EQ(vols.objects[VolumeObject(kUuid1)]["csi.journalpool"], "000000000000000a");
  auto found = j.Lookup(kName);
  ASSERT_TRUE(found.ok() && *found);
  EXPECT_EQ((*found)->uuid, kUuid1);
  auto attrs = ReadVolumeAttributes(vols, kUuid1);
  ASSERT_TRUE(attrs.ok() && *attrs);
  EXPECT_EQ((*attrs)->journal_pool_id, 10);
  EXPECT_EQ((*attrs)->request_name, kName);
}

TEST(VolumeJournal, ConflictingUuidIsRetried) {
  Harness h;
  h.store.objects[VolumeObject(kUuid1)];  // someone else's
  auto r = h.Create(kName);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->uuid, kUuid2);
}

TEST(VolumeJournal, GivesUpAfterFiveConflicts) {
  FakeOmapStore store;
  store.objects[VolumeObject(kUuid1)];
  int calls = 0;
  VolumeJournal j(store, store, {1, 1}, "default", [&] {
    ++calls;
    return std::string(kUuid1);
  });
  auto r = j.Reserve(kName);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kAlreadyExists);
  EXPECT_EQ(calls, 5);
}

TEST(VolumeJournal, StaleKeyPointingAtAnotherRequestIsDropped) {
  Harness h;
  h.store.objects["csi.volumes.default"]["csi.volume.pvc-1b7e"] = kUuid3;
  h.store.objects[VolumeObject(kUuid3)] = {{"csi.volname", "pvc-other"}};
  auto found = h.journal.Lookup(kName);
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(*found);
  EXPECT_FALSE(h.store.objects["csi.volumes.default"].count("csi.volume.pvc-1b7e"));
  EXPECT_TRUE(h.store.objects.count(VolumeObject(kUuid3)));  // not ours to remove
}

TEST(VolumeJournal, NameReservedInAnotherPoolIsAlreadyExists) {
  Harness h;
  h.store.objects["csi.volumes.default"]["csi.volume.pvc-1b7e"] = std::string("0000000000000009/") + kUuid3;
  auto found = h.journal.Lookup(kName);
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), Code::kAlreadyExists);
}

TEST(VolumeJournal, UndoRemovesEverythingAndIsIdempotent) {
  Harness h;
  auto r = h.Create(kName);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(h.journal.Undo(kName, r->uuid).ok());
  EXPECT_EQ(h.store.objects, (std::map<std::string, OmapValues>{{"csi.volumes.default", {}}}));
  EXPECT_TRUE(h.journal.Undo(kName, r->uuid).ok());
  auto attrs = ReadVolumeAttributes(h.store, r->uuid);
  ASSERT_TRUE(attrs.ok());
  EXPECT_FALSE(*attrs);
}

// A crash after every possible number of writes, then a retry: the retry
// ends with exactly one consistent reservation. The only leftover allowed is
// an empty per-volume object no directory key points at (a crash between
// the exclusive create and the directory key leaks it, as in ceph-csi).
TEST(VolumeJournal, EveryCrashPointThenRetryLeavesOneReservation) {
  for (int crash_after = 0; crash_after < 4; ++crash_after) {
    SCOPED_TRACE("crash after " + std::to_string(crash_after) + " writes");
    Harness h;
    h.store.writes_left = crash_after;
    (void)h.Create(kName);
    h.store.writes_left = -1;
    auto r = h.Create(kName);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const auto& dir = h.store.objects["csi.volumes.default"];
    ASSERT_EQ(dir.size(), 1u);
    EXPECT_EQ(dir.at("csi.volume.pvc-1b7e"), r->uuid);
    int live = 0;
    for (const auto& [object, keys] : h.store.objects) {
      if (object == "csi.volumes.default") continue;
      if (object == VolumeObject(r->uuid)) {
        ++live;
        EXPECT_EQ(keys, (OmapValues{{"csi.volname", kName}, {"csi.imagename", r->image_name}}));
      } else {
        EXPECT_TRUE(keys.empty()) << object;
      }
    }
    EXPECT_EQ(live, 1);
    auto again = h.Create(kName);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *r);
  }
}

// A crash during Undo (delete) at every point, then a retry of the delete:
// nothing is left, and the name can be reserved again.
TEST(VolumeJournal, EveryCrashPointDuringUndoThenRetryRemovesAll) {
  for (int crash_after = 0; crash_after < 2; ++crash_after) {
    SCOPED_TRACE("crash after " + std::to_string(crash_after) + " writes");
    Harness h;
    auto r = h.Create(kName);
    ASSERT_TRUE(r.ok());
    h.store.writes_left = crash_after;
    (void)h.journal.Undo(kName, r->uuid);
    h.store.writes_left = -1;
    ASSERT_TRUE(h.journal.Undo(kName, r->uuid).ok());
    EXPECT_EQ(h.store.objects, (std::map<std::string, OmapValues>{{"csi.volumes.default", {}}}));
  }
}

}  // namespace
}  // namespace nbdk
