// The snapshot journal: ceph-csi's csi.snaps.<instance> / csi.snap.<uuid>
// layout, the source check, listing, and a crash between any two omap
// writes of a reserve or an undo.
#include <gtest/gtest.h>

#include "ceph/omap_volume_keys.h"
#include "csi/controller/omap_volume_journal.h"
#include "test/ceph/fake_omap_store.h"

namespace nbdk {
namespace {

constexpr char kName[] = "snapshot-4c1f";
constexpr char kSource[] = "csi-vol-0a0a0a0a-0a0a-4a0a-8a0a-0a0a0a0a0a0a";
constexpr char kUuid1[] = "11111111-1111-4111-8111-111111111111";
constexpr char kUuid2[] = "22222222-2222-4222-8222-222222222222";
constexpr char kDir[] = "csi.snaps.default";

struct Harness {
  FakeOmapStore store;
  std::vector<std::string> uuids{kUuid1, kUuid2};
  size_t next = 0;
  VolumeJournal journal{
      store, store, {5, 5}, "default", [this] { return uuids[next++ % uuids.size()]; }, kSnapshotJournalNames};

  Result<VolumeReservation> Create(const std::string& name, const std::string& source = kSource) {
    auto found = journal.Lookup(name, source);
    if (!found.ok()) return found.status();
    if (*found) return **found;
    return journal.Reserve(name, "", source);
  }
};

TEST(SnapshotJournalNames, AreCephCsis) {
  EXPECT_EQ(DirectoryObject(kSnapshotJournalNames, "default"), "csi.snaps.default");
  EXPECT_EQ(DirectoryKey(kSnapshotJournalNames, "snap-1"), "csi.snap.snap-1");
  EXPECT_EQ(JournalObject(kSnapshotJournalNames, kUuid1), std::string("csi.snap.") + kUuid1);
  EXPECT_EQ(DefaultImageName(kSnapshotJournalNames, kUuid1), std::string("csi-snap-") + kUuid1);
  EXPECT_EQ(DirectoryObject(kVolumeJournalNames, "default"), "csi.volumes.default");
}

// ceph-csi's reserveSnap records the source volume's encryption.
TEST(SnapshotJournal, ASnapshotOfAnEncryptedVolumeRecordsItsKms) {
  Harness h;
  auto r = h.journal.Reserve(kName, "", kSource, "", {"default", "block"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& keys = h.store.objects[std::string("csi.snap.") + kUuid1];
  EXPECT_EQ(keys.at("csi.volume.encryptKMS"), "default");
  EXPECT_EQ(keys.at("csi.volume.encryptionType"), "block");
  auto attrs = ReadVolumeAttributes(h.store, kUuid1, kSnapshotJournalNames);
  ASSERT_TRUE(attrs.ok() && *attrs);
  EXPECT_EQ((*attrs)->encryption, (JournalEncryption{"default", "block"}));
}

TEST(SnapshotJournal, ReserveWritesCephCsisKeys) {
  Harness h;
  auto r = h.Create(kName);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (VolumeReservation{kUuid1, std::string("csi-snap-") + kUuid1, kSource, {}}));
  std::map<std::string, OmapValues> want = {
      {kDir, {{"csi.snap.snapshot-4c1f", kUuid1}}},
      {std::string("csi.snap.") + kUuid1,
       {{"csi.snapname", kName}, {"csi.imagename", std::string("csi-snap-") + kUuid1}, {"csi.source", kSource}}}};
  EXPECT_EQ(h.store.objects, want);
  auto again = h.Create(kName);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *r);
  EXPECT_EQ(h.store.objects, want);
  auto attrs = ReadVolumeAttributes(h.store, kUuid1, kSnapshotJournalNames);
  ASSERT_TRUE(attrs.ok() && *attrs);
  EXPECT_EQ((*attrs)->request_name, kName);
  EXPECT_EQ((*attrs)->source, kSource);
  EXPECT_EQ((*attrs)->image_name, std::string("csi-snap-") + kUuid1);
}

TEST(SnapshotJournal, SameNameOtherSourceIsAlreadyExists) {
  Harness h;
  ASSERT_TRUE(h.Create(kName).ok());
  auto other = h.Create(kName, "csi-vol-other");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), Code::kAlreadyExists);
  EXPECT_NE(other.status().message().find("csi-vol-other"), std::string::npos) << other.status().message();
  // Nothing was touched: the first snapshot stands.
  auto found = h.journal.Lookup(kName, kSource);
  ASSERT_TRUE(found.ok() && *found);
  EXPECT_EQ((*found)->uuid, kUuid1);
}

TEST(SnapshotJournal, ImageNameWithoutKeyIsCsiSnap) {
  // ceph-csi before csi.imagename existed: the name is derived.
  FakeOmapStore store;
  store.objects[std::string("csi.snap.") + kUuid2] = {{"csi.snapname", kName}, {"csi.source", kSource}};
  auto attrs = ReadVolumeAttributes(store, kUuid2, kSnapshotJournalNames);
  ASSERT_TRUE(attrs.ok() && *attrs);
  EXPECT_EQ((*attrs)->image_name, std::string("csi-snap-") + kUuid2);
}

TEST(SnapshotJournal, ListGivesEveryNameAndIgnoresVolumes) {
  Harness h;
  ASSERT_TRUE(h.Create("snap-a").ok());
  ASSERT_TRUE(h.Create("snap-b").ok());
  h.store.objects[kDir]["unrelated"] = "x";  // not a csi.snap. key
  auto list = h.journal.List();
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ(list->at("snap-a").uuid, kUuid1);
  EXPECT_EQ(list->at("snap-b").uuid, kUuid2);

  FakeOmapStore empty;
  VolumeJournal none(
      empty, empty, {5, 5}, "default", [] { return std::string(kUuid1); }, kSnapshotJournalNames);
  auto nothing = none.List();
  ASSERT_TRUE(nothing.ok());
  EXPECT_TRUE(nothing->empty());

  h.store.objects[kDir]["csi.snap.bad"] = "not-a-uuid";
  auto bad = h.journal.List();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kCorruption);
}

TEST(SnapshotJournal, SeparateJournalPool) {
  FakeOmapStore dir, images;
  VolumeJournal j(
      dir, images, {3, 10}, "default", [] { return std::string(kUuid1); }, kSnapshotJournalNames);
  ASSERT_TRUE(j.Reserve(kName, "", kSource).ok());
  EXPECT_EQ(dir.objects[kDir]["csi.snap.snapshot-4c1f"], std::string("0000000000000003/") + kUuid1);
  EXPECT_EQ(images.objects[std::string("csi.snap.") + kUuid1]["csi.journalpool"], "000000000000000a");
  auto found = j.Lookup(kName, kSource);
  ASSERT_TRUE(found.ok() && *found);
}

// A crash after every possible number of writes of a reserve, then a retry:
// exactly one consistent reservation, as for volumes; the only leftover is
// an empty per-snapshot object no key points at.
TEST(SnapshotJournal, EveryCrashPointThenRetryLeavesOneReservation) {
  for (int crash_after = 0; crash_after < 4; ++crash_after) {
    SCOPED_TRACE("crash after " + std::to_string(crash_after) + " writes");
    Harness h;
    h.store.writes_left = crash_after;
    (void)h.Create(kName);
    h.store.writes_left = -1;
    auto r = h.Create(kName);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const auto& dir = h.store.objects[kDir];
    ASSERT_EQ(dir.size(), 1u);
    EXPECT_EQ(dir.at("csi.snap.snapshot-4c1f"), r->uuid);
    for (const auto& [object, keys] : h.store.objects) {
      if (object == kDir) continue;
      if (object == "csi.snap." + r->uuid) {
        EXPECT_EQ(keys,
                  (OmapValues{{"csi.snapname", kName}, {"csi.imagename", r->image_name}, {"csi.source", kSource}}));
      } else {
        EXPECT_TRUE(keys.empty()) << object;
      }
    }
    EXPECT_EQ(r->source, kSource);
  }
}

// A crash during an undo (DeleteSnapshot) at every point, then the retry.
TEST(SnapshotJournal, EveryCrashPointDuringUndoThenRetryRemovesAll) {
  for (int crash_after = 0; crash_after < 2; ++crash_after) {
    SCOPED_TRACE("crash after " + std::to_string(crash_after) + " writes");
    Harness h;
    auto r = h.Create(kName);
    ASSERT_TRUE(r.ok());
    h.store.writes_left = crash_after;
    (void)h.journal.Undo(kName, r->uuid);
    h.store.writes_left = -1;
    // Once the per-snapshot object is gone, the snapshot is gone for
    // readers too: Lookup drops the key that still points at it.
    auto found = h.journal.Lookup(kName, kSource);
    ASSERT_TRUE(found.ok());
    EXPECT_EQ(found->has_value(), crash_after == 0);
    ASSERT_TRUE(h.journal.Undo(kName, r->uuid).ok());
    EXPECT_EQ(h.store.objects, (std::map<std::string, OmapValues>{{kDir, {}}}));
  }
}

}  // namespace
}  // namespace nbdk
