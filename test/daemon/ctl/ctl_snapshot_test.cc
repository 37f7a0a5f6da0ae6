// nbdkeeperctl and a snapshot (`map POOL/[NS/]IMAGE@SNAP`, as `rbd device
// map --read-only` maps one): read-only, a volume of its own beside the
// image's, nothing that would make or write one, and the snapshot shown
// where `rbd device list` shows it.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "daemon/ctl/ctl_args.h"
#include "daemon/ctl/persisted_volumes.h"
#include "daemon/ctl/volume_table.h"
#include "test/daemon/ctl/parse_args.h"

namespace nbdk::ctl {
namespace {

using testing::Parse;

TEST(CtlSnapshotTest, ASnapshotIsMappedReadOnlyAsAVolumeOfItsOwn) {
  auto c = Parse({"map", "db@monday", "--mount", "/mnt/monday"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->map.Spec(), "rbd/db@monday") << "the default pool, as rbd's";
  EXPECT_EQ(c->map.snap, "monday");
  EXPECT_FALSE(c->map.read_only) << "no --ro given";
  EXPECT_TRUE(c->map.ReadOnly()) << "a snapshot is read-only all the same";
  EXPECT_EQ(StaticVolumeId(c->map), "db.snap.monday");
  MapSpec head;
  ASSERT_TRUE(ParseImageSpec("db", &head).ok());
  EXPECT_FALSE(head.ReadOnly());
  EXPECT_EQ(StaticVolumeId(head), "db") << "the image's own volume stays its name";
  MapSpec ns;
  ASSERT_TRUE(ParseImageSpec("pool/tenant/db@monday", &ns).ok());
  EXPECT_EQ(ns.rados_namespace, "tenant");
  EXPECT_EQ(ns.Spec(), "pool/tenant/db@monday");
}

// Each refusal names the option and happens before anything is mapped.
TEST(CtlSnapshotTest, WhatWouldMakeOrWriteASnapshotIsRefusedNamingIt) {
  struct Case {
    std::vector<std::string> args;
    const char* names;
  };
  for (const Case& bad : std::vector<Case>{{{"map", "rbd/db@monday", "--size", "1G"}, "--size"},
                                           {{"map", "rbd/db@monday", "--encrypt", "/etc/nbdkeeper/db.pass"}, "encrypt"},
                                           {{"map", "rbd/db@monday", "--exclusive"}, "exclusive"},
                                           {{"map", "rbd/db@monday", "-o", "try-netlink,exclusive"}, "exclusive"},
                                           {{"map", "rbd/db@"}, "no snapshot name"},
                                           {{"map", "rbd/db@-x"}, "snapshot"},
                                           {{"map", "rbd/db@a@b"}, "snapshot"}}) {
    auto c = Parse(bad.args);
    EXPECT_EQ(c.status().code(), Code::kInvalidArgument) << bad.args[1];
    EXPECT_NE(c.status().message().find(bad.names), std::string::npos) << c.status().message();
  }
  EXPECT_TRUE(Parse({"map", "rbd/db@monday", "-o", "try-netlink", "--ro", "--block"}).ok());
}

constexpr char kStatus[] = R"({"version":"0.1.0","ready":true,"volumes":[
  {"volume_id":"db","image":"rbd/db","access":"ext4","state":"Connected","device":"/dev/nbd0","pid":7,
   "staging_path":"/s/db","targets":[]},
  {"volume_id":"db.snap.monday","image":"rbd/db","snap":"monday","access":"ext4","state":"Connected",
   "device":"/dev/nbd1","pid":8,"staging_path":"/s/db.snap.monday","targets":["/mnt/monday"]}]})";

TEST(CtlSnapshotTest, ListShowsTheSnapshotWhereRbdDeviceListDoes) {
  auto status = ParseDaemonStatus(kStatus);
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  rapidjson::Document doc;
  doc.Parse(RenderJson(*status).c_str());
  ASSERT_TRUE(doc.IsArray() && doc.Size() == 2);
  EXPECT_STREQ(doc[0]["snap"].GetString(), "-");
  EXPECT_STREQ(doc[0]["spec"].GetString(), "rbd/db");
  EXPECT_STREQ(doc[1]["snap"].GetString(), "monday");
  EXPECT_STREQ(doc[1]["image"].GetString(), "db") << "rbd's image key: the name alone";
  EXPECT_STREQ(doc[1]["spec"].GetString(), "rbd/db@monday");
  EXPECT_STREQ(doc[1]["device"].GetString(), "/dev/nbd1");
  std::string table = RenderTable(*status, false);
  EXPECT_NE(table.find("rbd/db@monday"), std::string::npos) << table;
}

// `unmap rbd/db` is the image's volume, never its snapshot's, and the
// other way round.
TEST(CtlSnapshotTest, TheImageAndItsSnapshotAreFoundApart) {
  auto status = ParseDaemonStatus(kStatus);
  ASSERT_TRUE(status.ok());
  for (const char* key : {"rbd/db@monday", "db@monday", "db.snap.monday", "/dev/nbd1", "/mnt/monday"}) {
    const VolumeRow* v = FindVolume(*status, key);
    ASSERT_NE(v, nullptr) << key;
    EXPECT_EQ(v->volume_id, "db.snap.monday") << key;
  }
  for (const char* key : {"rbd/db", "db", "/dev/nbd0"}) {
    const VolumeRow* v = FindVolume(*status, key);
    ASSERT_NE(v, nullptr) << key;
    EXPECT_EQ(v->volume_id, "db") << key;
  }
  EXPECT_EQ(FindVolume(*status, "rbd/db@tuesday"), nullptr);
}

// The volumes file names a snapshot as rbdmap's does, in "image": it comes
// back read-only, with the snapshot's own volume ID.
TEST(CtlSnapshotTest, TheVolumesFileKeepsTheSnapshot) {
  std::string dir = ::testing::TempDir() + "/nbdk-snap-XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  std::string path = dir + "/volumes.json";
  std::ofstream(path) << R"({"volumes": [{"image": "rbd/db@monday", "mount": "/mnt/monday"}, {"image": "rbd/db"}]})";
  auto v = LoadPersisted(path);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  ASSERT_EQ(v->size(), 2u);
  EXPECT_EQ((*v)[0].volume_id, "db.snap.monday");
  EXPECT_TRUE((*v)[0].spec.ReadOnly());
  EXPECT_EQ((*v)[1].volume_id, "db");
  ASSERT_TRUE(SavePersisted(path, *v).ok());
  auto back = LoadPersisted(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ((*back)[0].spec.Spec(), "rbd/db@monday");
  EXPECT_EQ((*back)[0].volume_id, "db.snap.monday");
  EXPECT_EQ((*back)[1].spec.snap, "");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nbdk::ctl
