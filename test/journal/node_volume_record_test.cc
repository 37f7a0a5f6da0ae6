// VolumeRecord JSON codec, record file names, record frames and the boot id.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <set>

#include "journal/node_boot_id.h"
#include "journal/node_crc32c.h"
#include "journal/node_record_file_name.h"
#include "journal/node_record_frame.h"
#include "journal/volume_record.h"
#include "test/journal/node_journal_fixtures.h"

namespace nbdk {
namespace {

using testing::FullRecord;
using testing::ScratchDir;

enum class Kind { kString, kStrings, kBool, kInt, kTargets };

const std::vector<std::pair<std::string, Kind>> kFields = {
    {"volume_id", Kind::kString},
    {"cluster_id", Kind::kString},
    {"monitors", Kind::kStrings},
    {"pool", Kind::kString},
    {"rados_namespace", Kind::kString},
    {"image", Kind::kString},
    {"user_id", Kind::kString},
    {"keyfile_path", Kind::kString},
    {"ceph_conf_path", Kind::kString},
    {"nbd_device", Kind::kString},
    {"cookie", Kind::kString},
    {"map_options", Kind::kStrings},
    {"fs_type", Kind::kString},
    {"block", Kind::kBool},
    {"read_only", Kind::kBool},
    {"staging_path", Kind::kString},
    {"published_targets", Kind::kTargets},
    {"rbd_nbd_pid", Kind::kInt},
    {"boot_id", Kind::kString},
    {"reattach_timeout_s", Kind::kInt},
    {"created_ms", Kind::kInt},
    {"updated_ms", Kind::kInt},
    {"state", Kind::kString},
};

// `record`'s JSON, edited by `edit`, then decoded.
template <typename Edit>
Result<VolumeRecord> DecodeEditedRecord(const VolumeRecord& record, Edit edit) {
  rapidjson::Document doc;
  doc.Parse(EncodeVolumeRecord(record).c_str());
  edit(doc);
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  doc.Accept(w);
  return DecodeVolumeRecord(buf.GetString());
}

// The full record's JSON, edited by `edit`: how decoding it ends.
template <typename Edit>
Status DecodeEdited(Edit edit) {
  return DecodeEditedRecord(FullRecord("vol-1"), edit).status();
}

TEST(VolumeRecordTest, FullRecordRoundTrips) {
  VolumeRecord record = FullRecord("0001-0009-rook-ceph-0000000000000002-b0285c97");
  Result<VolumeRecord> decoded = DecodeVolumeRecord(EncodeVolumeRecord(record));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, record);
  EXPECT_EQ(decoded->cookie, record.cookie);  // quotes, backslash, UTF-8 survive
}

TEST(VolumeRecordTest, RecordedImageIsTheMappedImageAsItsUser) {
  VolumeRecord r = FullRecord("vol-1");
  ImageSpec image = RecordedImage(r);
  EXPECT_EQ(image.pool, r.pool);
  EXPECT_EQ(image.rados_namespace, r.rados_namespace);
  EXPECT_EQ(image.image, r.image);
  EXPECT_EQ(image.snap, r.snap);
  EXPECT_EQ(image.Spec(), "replicapool/tenant-a/csi-vol-b0285c97@nightly");
  EXPECT_EQ(image.monitors, r.monitors);
  EXPECT_EQ(image.ceph_conf, r.ceph_conf_path);
  EXPECT_EQ(image.user_id, r.user_id);
  EXPECT_EQ(image.keyfile, r.keyfile_path);
}

TEST(VolumeRecordTest, EncodesExactlyTheDocumentedFieldsAndNoKey) {
  rapidjson::Document doc;
  doc.Parse(EncodeVolumeRecord(FullRecord("vol-1")).c_str());
  ASSERT_TRUE(doc.IsObject());
  std::set<std::string> members;
  for (auto& m : doc.GetObject()) members.insert(m.name.GetString());
  std::set<std::string> expected = {"mount_point_created", "mount_flags", "multi_node",
                                    "rbd_clients",         "luks_mapper", "snap"};
  for (auto& [name, kind] : kFields) expected.insert(name);
  EXPECT_EQ(members, expected);
}

TEST(VolumeRecordTest, AStateOtherThanStagingOrStagedIsCorruption) {
  Status s = DecodeEdited([](rapidjson::Document& d) { d["state"].SetString("mounted"); });
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_NE(s.message().find("'mounted'"), std::string::npos) << s.message();
}

// Records written before the `created` flags existed: nothing counts as
// made by the daemon, so nothing of theirs is ever removed.
TEST(VolumeRecordTest, CreatedFlagsAbsentInOlderRecordsMeanNotCreated) {
  VolumeRecord full = FullRecord("vol-1");
  full.mount_point_created = true;
  for (auto& t : full.published_targets) t.created = true;
  auto old = DecodeEditedRecord(full, [](rapidjson::Document& doc) {
    doc.RemoveMember("mount_point_created");
    for (auto& t : doc["published_targets"].GetArray()) t.RemoveMember("created");
  });
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_FALSE(old->mount_point_created);
  ASSERT_FALSE(old->published_targets.empty());
  for (const auto& t : old->published_targets) EXPECT_FALSE(t.created);
}

// Records written before mount flags were journaled: a heal remounts
// without flags, as those daemons did.
TEST(VolumeRecordTest, MountFlagsAbsentInOlderRecordsMeanNone) {
  auto old = DecodeEditedRecord(FullRecord("vol-1"), [](rapidjson::Document& doc) {
    doc.RemoveMember("mount_flags");
    for (auto& t : doc["published_targets"].GetArray()) t.RemoveMember("mount_flags");
  });
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_TRUE(old->mount_flags.empty());
  for (const auto& t : old->published_targets) EXPECT_TRUE(t.mount_flags.empty());
}

// Records written before the access mode was journaled: no target counts
// as SINGLE_NODE_SINGLE_WRITER. The member is written only when set, so the
// records of other publishes stay byte for byte as those daemons wrote them.
TEST(VolumeRecordTest, SingleWriterIsWrittenOnlyWhenSetAndAbsentMeansNot) {
  VolumeRecord full = FullRecord("vol-1");
  ASSERT_EQ(full.published_targets.size(), 2u);
  ASSERT_TRUE(full.published_targets[1].single_writer);
  rapidjson::Document doc;
  doc.Parse(EncodeVolumeRecord(full).c_str());
  EXPECT_FALSE(doc["published_targets"][0].HasMember("single_writer"));
  EXPECT_TRUE(doc["published_targets"][1]["single_writer"].GetBool());

  auto old = DecodeEditedRecord(full, [](rapidjson::Document& d) {
    for (auto& t : d["published_targets"].GetArray()) t.RemoveMember("single_writer");
  });
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  for (const auto& t : old->published_targets) EXPECT_FALSE(t.single_writer);
  Status s = DecodeEdited([](rapidjson::Document& d) { d["published_targets"][1]["single_writer"].SetString("yes"); });
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_NE(s.message().find("published_targets[1].single_writer"), std::string::npos) << s.message();
}

TEST(VolumeRecordTest, ClientsAndMultiNodeAreWrittenOnlyWhenSetAndAbsentMeanNone) {
  VolumeRecord plain = FullRecord("vol-1");
  plain.multi_node = false;
  plain.rbd_clients.clear();
  rapidjson::Document doc;
  doc.Parse(EncodeVolumeRecord(plain).c_str());
  EXPECT_FALSE(doc.HasMember("multi_node"));
  EXPECT_FALSE(doc.HasMember("rbd_clients"));
  Result<VolumeRecord> old = DecodeVolumeRecord(EncodeVolumeRecord(plain));
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(*old, plain);

  doc.Parse(EncodeVolumeRecord(FullRecord("vol-1")).c_str());
  EXPECT_TRUE(doc["multi_node"].GetBool());
  ASSERT_EQ(doc["rbd_clients"].Size(), 2u);
  EXPECT_STREQ(doc["rbd_clients"][0].GetString(), "client.4123@10.0.0.7:0/3440592934");
}

TEST(VolumeRecordTest, TheLuksMapperIsWrittenOnlyWhenSetAndAbsentMeansNone) {
  VolumeRecord plain = FullRecord("vol-1");
  plain.luks_mapper.clear();
  rapidjson::Document doc;
  doc.Parse(EncodeVolumeRecord(plain).c_str());
  EXPECT_FALSE(doc.HasMember("luks_mapper"));
  Result<VolumeRecord> old = DecodeVolumeRecord(EncodeVolumeRecord(plain));
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->luks_mapper, "");
  doc.Parse(EncodeVolumeRecord(FullRecord("vol-1")).c_str());
  EXPECT_STREQ(doc["luks_mapper"].GetString(), "luks-rbd-vol-1");
  Status s = DecodeEdited([](rapidjson::Document& d) { d["luks_mapper"].SetBool(true); });
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_NE(s.message().find("luks_mapper"), std::string::npos) << s.message();
}

// A snapshot's volume: its re-attach and adoption map the snapshot, so the
// record keeps it. Written only when set, so an image's record stays as
// older daemons wrote it, and one of theirs (no member) maps the image.
TEST(VolumeRecordTest, TheSnapshotIsWrittenOnlyWhenSetAndAbsentMeansTheImage) {
  VolumeRecord image = FullRecord("vol-1");
  image.snap.clear();
  rapidjson::Document doc;
  doc.Parse(EncodeVolumeRecord(image).c_str());
  EXPECT_FALSE(doc.HasMember("snap"));
  Result<VolumeRecord> old = DecodeVolumeRecord(EncodeVolumeRecord(image));
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->snap, "");
  EXPECT_EQ(RecordedImage(*old).Spec(), "replicapool/tenant-a/csi-vol-b0285c97");

  doc.Parse(EncodeVolumeRecord(FullRecord("vol-1")).c_str());
  EXPECT_STREQ(doc["snap"].GetString(), "nightly");
  Result<VolumeRecord> snap = DecodeVolumeRecord(EncodeVolumeRecord(FullRecord("vol-1")));
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(RecordedImage(*snap).Spec(), "replicapool/tenant-a/csi-vol-b0285c97@nightly");
}

// The snapshot goes onto rbd-nbd's command line at every re-attach: a name
// Ceph's rule refuses (an option, a second '@', nothing) is never read as one.
TEST(VolumeRecordTest, ASnapshotNameCephWouldRefuseIsCorruptionNamingIt) {
  for (const char* bad : {"--exclusive", "a@b", "a/b", "", "with space"}) {
    Status s = DecodeEdited([bad](rapidjson::Document& d) { d["snap"].SetString(bad, d.GetAllocator()); });
    EXPECT_EQ(s.code(), Code::kCorruption) << bad;
    EXPECT_NE(s.message().find("field snap"), std::string::npos) << s.message();
  }
  Status s = DecodeEdited([](rapidjson::Document& d) { d["snap"].SetInt(3); });
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_NE(s.message().find("snap"), std::string::npos) << s.message();
}

TEST(VolumeRecordTest, AClientThatDoesNotParseIsCorruptionNamingIt) {
  Status s = DecodeEdited([](rapidjson::Document& d) { d["rbd_clients"][1].SetString("10.0.0.7:0/1"); });
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_NE(s.message().find("field rbd_clients[1]: ceph client '10.0.0.7:0/1'"), std::string::npos) << s.message();
  s = DecodeEdited([](rapidjson::Document& d) { d["rbd_clients"].SetString("client.1@10.0.0.7:0/1"); });
  EXPECT_EQ(s.code(), Code::kCorruption);
  s = DecodeEdited([](rapidjson::Document& d) { d["multi_node"].SetString("true"); });
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_NE(s.message().find("multi_node"), std::string::npos) << s.message();
}

// Written only while a server's own clients are not known yet; present
// and empty (nobody watched when it started) is not absent.
TEST(VolumeRecordTest, TheClientsBeforeAServerRoundTripPresentEmptyOrAbsent) {
  VolumeRecord r = FullRecord("vol-1");
  rapidjson::Document doc;
  doc.Parse(EncodeVolumeRecord(r).c_str());
  EXPECT_FALSE(doc.HasMember("rbd_clients_before"));
  for (std::vector<CephClient> before :
       {std::vector<CephClient>{}, std::vector<CephClient>{{"client.9", "10.0.0.8:0/5"}}}) {
    r.rbd_clients_before = before;
    doc.Parse(EncodeVolumeRecord(r).c_str());
    ASSERT_TRUE(doc.HasMember("rbd_clients_before"));
    EXPECT_EQ(doc["rbd_clients_before"].Size(), before.size());
    Result<VolumeRecord> back = DecodeVolumeRecord(EncodeVolumeRecord(r));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    ASSERT_TRUE(back->rbd_clients_before.has_value());
    EXPECT_EQ(*back, r);
  }
  r.rbd_clients_before = std::vector<CephClient>{{"client.9", "10.0.0.8:0/5"}};
  std::string text = EncodeVolumeRecord(r);
  std::string bad = text.substr(0, text.find("client.9@")) + "nonsense" + text.substr(text.find("10.0.0.8:0/5") + 12);
  Status s = DecodeVolumeRecord(bad).status();
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_NE(s.message().find("field rbd_clients_before[0]"), std::string::npos) << s.message();
}

TEST(VolumeRecordTest, WrongTypedMountFlagsAreNamed) {
  EXPECT_EQ(DecodeEdited([](rapidjson::Document& d) { d["mount_flags"].SetInt(1); }).message(),
            "field mount_flags: expected an array of strings");
  Status s = DecodeEdited([](rapidjson::Document& d) { d["published_targets"][0]["mount_flags"][0].SetBool(true); });
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_NE(s.message().find("published_targets[0].mount_flags[0]"), std::string::npos) << s.message();
}

TEST(VolumeRecordTest, EachMissingFieldIsNamed) {
  for (auto& [name, kind] : kFields) {
    Status s = DecodeEdited([&](rapidjson::Document& d) { d.RemoveMember(name.c_str()); });
    EXPECT_EQ(s.code(), Code::kCorruption) << name;
    EXPECT_EQ(s.message(), "field " + name + ": missing");
  }
}

TEST(VolumeRecordTest, EachWrongTypedFieldIsNamed) {
  for (auto& [name, kind] : kFields) {
    Status s = DecodeEdited([&](rapidjson::Document& d) {
      rapidjson::Value& v = d[name.c_str()];
      // A value of a neighbouring, plausible-looking but wrong type.
      if (kind == Kind::kString) v.SetInt(7);
      if (kind == Kind::kBool) v.SetString("true");
      if (kind == Kind::kInt) v.SetString("42");
      if (kind == Kind::kStrings || kind == Kind::kTargets) v.SetString("x");
    });
    EXPECT_EQ(s.code(), Code::kCorruption) << name;
    EXPECT_TRUE(s.message().starts_with("field " + name + ": expected ")) << s.message();
  }
}

TEST(VolumeRecordTest, NestedAndRangeErrorsAreNamed) {
  EXPECT_EQ(DecodeEdited([](rapidjson::Document& d) { d["monitors"][1].SetBool(true); }).message(),
            "field monitors[1]: expected a string");
  EXPECT_EQ(DecodeEdited([](rapidjson::Document& d) { d["published_targets"][1].RemoveMember("path"); }).message(),
            "field published_targets[1].path: missing");
  EXPECT_EQ(DecodeEdited([](rapidjson::Document& d) { d["published_targets"][0]["read_only"].SetInt(0); }).message(),
            "field published_targets[0].read_only: expected a boolean");
  EXPECT_EQ(DecodeEdited([](rapidjson::Document& d) { d["published_targets"][0].SetInt(0); }).message(),
            "field published_targets[0]: expected an object");
  EXPECT_EQ(DecodeEdited([](rapidjson::Document& d) { d["rbd_nbd_pid"].SetInt(-1); }).message(),
            "field rbd_nbd_pid: expected an integer in [0, 2147483647]");
  EXPECT_EQ(DecodeEdited([](rapidjson::Document& d) { d["created_ms"].SetDouble(1.5); }).message(),
            "field created_ms: expected an integer in [0, 9223372036854775807]");
  EXPECT_EQ(DecodeEdited([](rapidjson::Document& d) { d["volume_id"].SetString(""); }).message(),
            "field volume_id: empty");
  EXPECT_EQ(DecodeEdited([](rapidjson::Document& d) { d["state"].SetString(""); }).message(), "field state: empty");
}

TEST(VolumeRecordTest, StatesHaveTheirOnDiskNames) {
  EXPECT_EQ(VolumeStateName(VolumeState::kStaging), "staging");
  EXPECT_EQ(VolumeStateName(VolumeState::kStaged), "staged");
  EXPECT_EQ(ParseVolumeState("staging"), VolumeState::kStaging);
  EXPECT_EQ(ParseVolumeState("staged"), VolumeState::kStaged);
  EXPECT_EQ(ParseVolumeState("Staged"), std::nullopt);
  EXPECT_EQ(DecodeEdited([](rapidjson::Document& d) { d["state"].SetString("mapped"); }).message(),
            "field state: 'mapped' is neither staging nor staged");
}

TEST(VolumeRecordTest, UnknownMembersAreIgnored) {
  EXPECT_TRUE(DecodeEdited([](rapidjson::Document& d) { d.AddMember("future", 1, d.GetAllocator()); }).ok());
}

TEST(VolumeRecordTest, RejectsMalformedJson) {
  Status s = DecodeVolumeRecord("{\"volume_id\": ").status();
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_TRUE(s.message().starts_with("JSON parse error at offset 14")) << s.message();
  EXPECT_EQ(DecodeVolumeRecord("[1]").status().message(), "expected a JSON object");
  std::string json = EncodeVolumeRecord(FullRecord("vol-1"));
  EXPECT_FALSE(DecodeVolumeRecord(json + "{}").ok());  // trailing content
}

TEST(RecordFileNameTest, KeepsCephCsiIdsReadable) {
  EXPECT_EQ(*RecordFileName("0001-0009-rook-ceph-0000000000000002-b0285c97"),
            "v.0001-0009-rook-ceph-0000000000000002-b0285c97.rec");
  EXPECT_EQ(*RecordFileName("a.b"), "v.a_2eb.rec");
  EXPECT_EQ(*RecordFileName("a_b"), "v.a_5fb.rec");
}

TEST(RecordFileNameTest, MapsIdsToUniqueSafeNames) {
  std::vector<std::string> ids = {"a_2eb",
                                  "a.b",
                                  "a_b",
                                  "a_5fb",
                                  "A",
                                  "a",
                                  "a..",
                                  "a__",
                                  std::string(128, 'z'),
                                  std::string(127, 'z') + "y",
                                  "a" + std::string(59, '.'),
                                  "a" + std::string(60, '.'),
                                  "a" + std::string(127, '_'),
                                  "a" + std::string(127, '.')};
  std::set<std::string> names;
  for (const std::string& id : ids) {
    Result<std::string> name = RecordFileName(id);
    ASSERT_TRUE(name.ok()) << name.status().ToString();
    EXPECT_TRUE(names.insert(*name).second) << "duplicate " << *name;
    EXPECT_TRUE(IsRecordFileName(*name)) << *name;
    EXPECT_EQ(name->find('/'), std::string::npos) << *name;
    EXPECT_LE(name->size(), 186u) << *name;  // leaves room for the quarantine suffix
  }
  EXPECT_EQ(
      *RecordFileName("a" + std::string(59, '.')), "v.a" + [] {
        std::string s;
        for (int i = 0; i < 59; ++i) s += "_2e";
        return s;
      }() + ".rec");
  EXPECT_TRUE(RecordFileName("a" + std::string(60, '.'))->starts_with("b."));  // 181 escaped bytes: base64url
}

// The journal takes only IDs that meet the one volume ID rule
// (journal/volume_id.h), with its named errors.
TEST(RecordFileNameTest, RejectsIdsBreakingTheVolumeIdRule) {
  EXPECT_EQ(RecordFileName("").status().message(), "volume_id: missing");
  EXPECT_EQ(RecordFileName(std::string(129, 'a')).status().message(), "volume_id: 129 bytes, longer than 128");
  for (const std::string& id : {std::string("a/b"), std::string(".."), std::string("../../etc/passwd"),
                                std::string("a b"), std::string("x\0y", 3), std::string("\xc3\xa9")}) {
    EXPECT_EQ(RecordFileName(id).status().code(), Code::kInvalidArgument) << id;
  }
  EXPECT_FALSE(IsRecordFileName("v.x.rec.tmp"));
  EXPECT_FALSE(IsRecordFileName("LOCK"));
}

TEST(RecordFrameTest, Crc32cMatchesTheStandardCheckValue) {
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32cExtend(Crc32c("1234"), "56789"), 0xE3069283u);
}

TEST(RecordFrameTest, RoundTripsAndRejectsDamage) {
  std::string frame = EncodeRecordFrame("{\"a\":1}");
  ASSERT_EQ(frame.size(), kRecordFrameHeaderSize + 7);
  EXPECT_EQ(*DecodeRecordFrame(frame), "{\"a\":1}");
  EXPECT_EQ(DecodeRecordFrame(frame + "x").status().message(), "1 trailing bytes after the payload");
  EXPECT_EQ(DecodeRecordFrame(frame.substr(0, 20)).status().message(), "truncated payload: 4 of 7 bytes");
  EXPECT_EQ(DecodeRecordFrame(frame.substr(0, 9)).status().message(), "truncated header: 9 of 16 bytes");
  std::string flipped = frame;
  flipped[18] ^= 0x01;
  EXPECT_TRUE(DecodeRecordFrame(flipped).status().message().starts_with("checksum mismatch"));
  std::string version = frame;
  version[4] = 2;
  EXPECT_EQ(DecodeRecordFrame(version).status().message(), "unsupported format version 2");
}

TEST(BootIdTest, ReadsTheKernelBootId) {
  Result<std::string> id = ReadBootId();
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(id->size(), 36u);
  EXPECT_EQ(*ReadBootId(), *id);  // stable within a boot
}

TEST(BootIdTest, RejectsWhatIsNotABootId) {
  ScratchDir dir;
  std::string path = dir.path() + "/boot_id";
  testing::WriteFile(path, "not-a-uuid\n");
  Status s = ReadBootId(path).status();
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_NE(s.message().find(path), std::string::npos);
  testing::WriteFile(path, "0b5e4f3c-9a7d-4d4e-8b1f-2c3d4e5f6a7b\n");
  EXPECT_EQ(*ReadBootId(path), "0b5e4f3c-9a7d-4d4e-8b1f-2c3d4e5f6a7b");
  EXPECT_EQ(ReadBootId(dir.path() + "/missing").status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace nbdk
