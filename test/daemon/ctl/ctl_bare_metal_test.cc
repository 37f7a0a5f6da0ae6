// nbdkeeperctl on a bare-metal host (issue 32): the cluster and key from
// ceph.conf and the keyring as rbd finds them, map's options and output
// forms, the volumes file as an operator writes it, `list`'s rbd-compatible
// JSON, and the refusal of an image mapped outside nbdkeeper (fake sysfs and
// /proc trees).
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "daemon/ctl/cephx_key.h"
#include "daemon/ctl/cluster_choice.h"
#include "daemon/ctl/ctl_args.h"
#include "daemon/ctl/foreign_mappings.h"
#include "daemon/ctl/persisted_volumes.h"
#include "daemon/ctl/volume_table.h"
#include "test/daemon/ctl/parse_args.h"

namespace nbdk::ctl {
namespace {

class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "/nbdk-bare-XXXXXX";
    path_ = ::mkdtemp(pattern.data()) ? pattern : "";
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& text) const {
    std::string p = path_ + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(p).parent_path());
    std::ofstream(p) << text;
    return p;
  }

 private:
  std::string path_;
};

using testing::Parse;

TEST(ClusterChoiceTest, ACephConfNamesItsClusterAsRbdDoes) {
  TempDir d;
  d.Write("ceph.conf", "[global]\nfsid = aaaa-1\nmon_host = 10.0.0.1\n");
  d.Write("backup.conf", "[global]\nfsid = bbbb-2\nmon_host = 10.0.0.2\n");
  const std::string no_json = d.path() + "/absent.json";
  auto def = ChooseCluster(no_json, d.path(), "");
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  EXPECT_EQ(def->cluster_id, "aaaa-1") << "no --cluster: ceph.conf, its fsid as the cluster ID";
  EXPECT_EQ(def->name, "ceph");
  EXPECT_EQ(def->ceph_conf, d.path() + "/ceph.conf");
  auto backup = ChooseCluster(no_json, d.path(), "backup");
  ASSERT_TRUE(backup.ok());
  EXPECT_EQ(backup->cluster_id, "bbbb-2");
  EXPECT_EQ(ChooseCluster(no_json, d.path(), "bbbb-2")->name, "backup") << "the fsid names it too";
  auto absent = ChooseCluster(no_json, d.path(), "prod");
  EXPECT_EQ(absent.status().code(), Code::kInvalidArgument);
  EXPECT_NE(absent.status().message().find("backup (fsid bbbb-2)"), std::string::npos) << absent.status().message();

  std::filesystem::remove(d.path() + "/ceph.conf");
  EXPECT_FALSE(ChooseCluster(no_json, d.path(), "").ok()) << "rbd too needs --cluster without ceph.conf";

  std::string json = d.Write("config.json", R"([{"clusterID": "c1", "monitors": ["m:6789"]}])");
  auto only = ChooseCluster(json, d.path(), "");
  ASSERT_TRUE(only.ok()) << only.status().ToString();
  EXPECT_EQ(only->cluster_id, "c1") << "config.json's only cluster, as before";
  EXPECT_EQ(only->ceph_conf, "");
  EXPECT_FALSE(ChooseCluster(json, d.path(), "backup").ok()) << "with config.json, it alone names clusters";
  d.Write("config.json", R"([{"clusterID": "c1", "monitors": ["m"]}, {"clusterID": "c2", "monitors": ["n"]}])");
  auto two = ChooseCluster(json, d.path(), "");
  EXPECT_NE(two.status().message().find("name one with --cluster"), std::string::npos) << two.status().message();
}

TEST(CephxKeyTest, TheKeyIsFoundWhereLibradosFindsIt) {
  TempDir d;
  const std::string keyring = "[client.ops]\n\tkey = AQBvcHM=\n";
  d.Write("prod.client.ops.keyring", keyring);
  std::string conf = d.Write("prod.conf", "[global]\nfsid = f\nkeyring = " + d.path() + "/$cluster.$name.keyring\n");
  ChosenCluster prod{"f", "prod", conf};
  auto key = ReadCephxKey("", "ops", prod);
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  EXPECT_EQ(*key, "AQBvcHM=") << "the conf's keyring setting, metavariables expanded";

  d.Write("prod.conf", "[global]\nfsid = f\nkeyring = " + d.path() + "/absent, " + d.path() + "/ops.keyring\n" +
                           "[client.admin]\nkey = AQBhZG1pbg==\n[client.bob]\nkeyfile = " + d.path() + "/bob.key\n");
  d.Write("ops.keyring", keyring);
  d.Write("bob.key", "AQBib2I=\n");
  EXPECT_EQ(*ReadCephxKey("", "ops", prod), "AQBvcHM=") << "the first keyring of the list that exists";
  EXPECT_EQ(*ReadCephxKey("", "admin", prod), "AQBhZG1pbg==") << "key = in the conf";
  EXPECT_EQ(*ReadCephxKey("", "bob", prod), "AQBib2I=") << "keyfile = in the conf";
  EXPECT_EQ(*ReadCephxKey(d.path() + "/bob.key", "ops", prod), "AQBib2I=") << "--keyfile before all";
  auto none = ReadCephxKey("", "carol", prod);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("client.carol"), std::string::npos) << none.status().message();
  d.Write("prod.conf", "[global\n");
  EXPECT_NE(ReadCephxKey("", "ops", prod).status().message().find("line 1"), std::string::npos);
}

TEST(CtlArgsTest, MapTakesRbdsOptionsAndSpecs) {
  auto c = Parse({"map", "db", "-o", "try-netlink", "--exclusive", "--mount-options", "noatime,discard", "--quiet"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->map.Spec(), "rbd/db") << "the default pool, as rbd's";
  EXPECT_EQ(c->map.map_options, "try-netlink,exclusive");
  EXPECT_EQ(c->map.mount_options, std::vector<std::string>{"noatime,discard"});
  EXPECT_EQ(c->output, CtlOutput::kQuiet);
  auto json = Parse({"map", "pool/ns/img", "-oexclusive", "--json"});
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_EQ(json->map.map_options, "exclusive");
  EXPECT_EQ(json->output, CtlOutput::kJson);
  MapSpec snap;
  ASSERT_TRUE(ParseImageSpec("pool/ns/img@before", &snap).ok());
  EXPECT_EQ(snap.snap, "before");
  EXPECT_EQ(snap.Spec(), "pool/ns/img@before");
  auto bad = Parse({"map", "db", "-o", "key=AQB"});
  EXPECT_NE(bad.status().message().find("-o"), std::string::npos) << bad.status().message();
  EXPECT_EQ(Parse({"list", "--format", "json"})->output, CtlOutput::kJson);
  auto force = Parse({"unmap-all", "--force", "--persisted"});
  ASSERT_TRUE(force.ok());
  EXPECT_EQ(force->action, CtlAction::kUnmapAll);
  EXPECT_TRUE(force->force);
  EXPECT_TRUE(force->persisted_only);
  EXPECT_FALSE(Parse({"unmap", "db", "--persisted"}).ok());
  EXPECT_TRUE(Parse({"unmap", "db", "--force"})->force);
}

TEST(PersistedVolumesTest, AHandWrittenFileNeedsOnlyTheImage) {
  TempDir d;
  std::string path = d.Write("volumes.json", R"({"volumes": [
    {"image": "rbd/db", "mount": "/mnt/db", "mount_options": ["noatime"], "options": "exclusive"},
    {"image": "blocks", "block": true, "cluster": "backup"}]})");
  auto v = LoadPersisted(path);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  ASSERT_EQ(v->size(), 2u);
  EXPECT_EQ((*v)[0].volume_id, "db") << "filled in as map names an existing image";
  EXPECT_EQ((*v)[0].spec.mount_options, std::vector<std::string>{"noatime"});
  EXPECT_EQ((*v)[0].spec.map_options, "exclusive");
  EXPECT_EQ((*v)[1].spec.Spec(), "rbd/blocks");
  EXPECT_EQ((*v)[1].spec.cluster, "backup");
  ASSERT_TRUE(SavePersisted(path, *v).ok());
  auto back = LoadPersisted(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ((*back)[0].spec.mount_options, (*v)[0].spec.mount_options);
  EXPECT_EQ((*back)[0].spec.map_options, "exclusive");
  EXPECT_EQ((*back)[1].spec.cluster, "backup");
  for (std::string bad : {R"({"image": "rbd/db", "options": "rbd_cache=true"})",
                          R"({"image": "rbd/db", "mount_options": ["errors=panic"]})",
                          R"({"image": "rbd/db", "mount_options": "noatime"})",
                          R"({"image": "rbd/db", "block": true, "mount_options": ["noatime"]})",
                          R"({"image": "rbd/db@monday", "options": "exclusive"})"}) {
    d.Write("volumes.json", R"({"volumes": [)" + bad + "]}");
    auto r = LoadPersisted(path);
    EXPECT_EQ(r.status().code(), Code::kCorruption) << bad;
    EXPECT_NE(r.status().message().find("volumes[0]."), std::string::npos) << r.status().message();
  }
}

TEST(VolumeTableTest, JsonCarriesRbdDeviceListsKeys) {
  auto status = ParseDaemonStatus(R"({"version":"0.1.0","ready":true,"volumes":[
    {"volume_id":"raw","image":"rbd/ns/raw","access":"block","state":"Connected","device":"/dev/nbd1","pid":77,
     "staging_path":"/s/raw","targets":[]}]})");
  ASSERT_TRUE(status.ok());
  rapidjson::Document doc;
  doc.Parse(RenderJson(*status).c_str());
  ASSERT_TRUE(doc.IsArray() && doc.Size() == 1);
  const auto& v = doc[0];
  EXPECT_EQ(v["id"].GetInt(), 77);
  EXPECT_STREQ(v["pool"].GetString(), "rbd");
  EXPECT_STREQ(v["namespace"].GetString(), "ns");
  EXPECT_STREQ(v["image"].GetString(), "raw");
  EXPECT_STREQ(v["snap"].GetString(), "-");
  EXPECT_STREQ(v["device"].GetString(), "/dev/nbd1");
  EXPECT_STREQ(v["spec"].GetString(), "rbd/ns/raw");
  EXPECT_STREQ(v["volume"].GetString(), "raw");
  EXPECT_STREQ(v["state"].GetString(), "Connected");
}

// --encrypt names a passphrase file, never the passphrase; the volumes file
// keeps the path, and the table and JSON show the open mapper.
TEST(EncryptedMapTest, ThePassphraseIsAFileAndTheMapperIsShown) {
  auto map = Parse({"map", "rbd/vault", "--size", "1G", "--encrypt", "/etc/nbdkeeper/vault.pass"});
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  EXPECT_EQ(map->map.passphrase_file, "/etc/nbdkeeper/vault.pass");
  EXPECT_EQ(Parse({"map", "rbd/vault", "--encrypt", "hunter2"}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Parse({"map", "rbd/vault", "--encrypt"}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Parse({"unmap", "rbd/vault", "--encrypt", "/x"}).status().code(), Code::kInvalidArgument);

  TempDir d;
  std::string path = d.Write("volumes.json", R"({"volumes": [{"image": "rbd/vault", "encrypt": "/etc/v.pass"}]})");
  auto v = LoadPersisted(path);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ((*v)[0].spec.passphrase_file, "/etc/v.pass");
  ASSERT_TRUE(SavePersisted(path, *v).ok());
  EXPECT_EQ((*LoadPersisted(path))[0].spec.passphrase_file, "/etc/v.pass");

  auto status = ParseDaemonStatus(R"({"version":"0.1.0","ready":true,"volumes":[
    {"volume_id":"vault","image":"rbd/vault","access":"ext4","state":"Connected","device":"/dev/nbd2","pid":7,
     "luks_mapper":"luks-rbd-vault","staging_path":"/s/vault","targets":[]}]})");
  ASSERT_TRUE(status.ok());
  EXPECT_NE(RenderTable(*status, false).find("/dev/nbd2 (luks-rbd-vault)"), std::string::npos)
      << RenderTable(*status, false);
  rapidjson::Document doc;
  doc.Parse(RenderJson(*status).c_str());
  EXPECT_STREQ(doc[0]["luks_mapper"].GetString(), "luks-rbd-vault");
}

TEST(ForeignMappingsTest, KrbdAndUnsupervisedRbdNbdAreFound) {
  TempDir d;
  HostRoots roots{d.path() + "/sys", d.path() + "/proc"};
  auto krbd = [&](const std::string& id, const std::string& pool, const std::string& ns, const std::string& name,
                  const std::string& snap) {
    std::string dir = "sys/bus/rbd/devices/" + id + "/";
    d.Write(dir + "pool", pool + "\n");
    d.Write(dir + "pool_ns", ns + "\n");
    d.Write(dir + "name", name + "\n");
    d.Write(dir + "current_snap", snap + "\n");
  };
  krbd("0", "rbd", "", "db", "-");
  krbd("1", "rbd", "", "db", "monday");
  krbd("2", "rbd", "tenant", "db", "-");
  auto process = [&](int pid, const std::string& argv) {
    std::string cmdline = argv;
    std::replace(cmdline.begin(), cmdline.end(), ' ', '\0');
    d.Write("proc/" + std::to_string(pid) + "/cmdline", cmdline + '\0');
  };
  process(100, "rbd-nbd map rbd/web --id admin");
  process(200, "/usr/bin/rbd-nbd --try-netlink map rbd/web");
  process(300, "rbd-nbd attach --device /dev/nbd9 rbd/web");
  process(400, "sleep 100");
  d.Write("sys/block/nbd4/pid", "200\n");

  MapSpec db;
  ASSERT_TRUE(ParseImageSpec("rbd/db", &db).ok());
  auto found = ForeignMappings(db, {}, roots);
  ASSERT_EQ(found.size(), 1u) << "the image, not its snapshot nor another namespace's";
  EXPECT_EQ(found[0].device, "/dev/rbd0");
  EXPECT_EQ(found[0].by, "krbd");
  EXPECT_EQ(
      RefusalFor(db, found),
      "rbd/db is already mapped on this host through krbd as /dev/rbd0 (unmap it first: rbd device unmap /dev/rbd0)");
  ASSERT_TRUE(ParseImageSpec("rbd/db@monday", &db).ok());
  EXPECT_EQ(ForeignMappings(db, {}, roots).at(0).device, "/dev/rbd1");

  MapSpec web;
  ASSERT_TRUE(ParseImageSpec("rbd/web", &web).ok());
  auto nbd = ForeignMappings(web, {100}, roots);
  ASSERT_EQ(nbd.size(), 2u) << "pid 100 is nbdkeeper's own";
  std::sort(nbd.begin(), nbd.end(), [](const auto& a, const auto& b) { return a.by < b.by; });
  EXPECT_EQ(nbd[0].by, "rbd-nbd pid 200");
  EXPECT_EQ(nbd[0].device, "/dev/nbd4") << "sysfs keeps the connecting pid";
  EXPECT_EQ(nbd[1].by, "rbd-nbd pid 300");
  EXPECT_EQ(nbd[1].device, "/dev/nbd9");
  MapSpec other;
  ASSERT_TRUE(ParseImageSpec("rbd/other", &other).ok());
  EXPECT_TRUE(ForeignMappings(other, {}, roots).empty());
}

}  // namespace
}  // namespace nbdk::ctl
