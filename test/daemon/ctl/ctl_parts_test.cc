// nbdkeeperctl's pure parts: the command line, sizes and image specs, cephx
// keys, /status rows and the persisted mappings file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "daemon/ctl/cephx_key.h"
#include "daemon/ctl/ctl_args.h"
#include "daemon/ctl/persisted_volumes.h"
#include "daemon/ctl/volume_table.h"
#include "test/daemon/ctl/parse_args.h"

namespace nbdk::ctl {
namespace {

using testing::Parse;

TEST(CtlArgsTest, MapTakesAnImageSpecAndItsOptions) {
  auto c = Parse({"--health", "127.0.0.1:1", "map", "rbd/ns1/db", "--fs=xfs", "--mount", "/mnt/db", "--ro", "--size",
                  "10G", "--id", "ops", "--keyfile", "/etc/ceph/ops.key", "--persist"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->action, CtlAction::kMap);
  EXPECT_EQ(c->global.health, "127.0.0.1:1");
  EXPECT_EQ(c->map.Spec(), "rbd/ns1/db");
  EXPECT_EQ(c->map.fs_type, "xfs");
  EXPECT_EQ(c->map.mount, "/mnt/db");
  EXPECT_TRUE(c->map.read_only);
  EXPECT_EQ(c->map.size_bytes, int64_t{10} << 30);
  EXPECT_EQ(c->map.user_id, "ops");
  EXPECT_TRUE(c->persist);
}

TEST(CtlArgsTest, BadCommandLinesNameTheProblem) {
  for (std::vector<std::string> bad :
       std::vector<std::vector<std::string>>{{},
                                             {"frobnicate"},
                                             {"map"},
                                             {"map", "rbd/img@"},
                                             {"map", "-x/img"},
                                             {"map", "a/b/c/d"},
                                             {"map", "rbd/img", "-o", "rbd_cache=true"},
                                             {"map", "rbd/img", "-o", ""},
                                             {"map", "rbd/img@s", "--size", "1G"},
                                             {"map", "rbd/img", "--block", "--mount-options", "noatime"},
                                             {"map", "rbd/img", "--mount-options", "errors=panic"},
                                             {"list", "--force"},
                                             {"unmap-all", "rbd/img"},
                                             {"map", "rbd/img", "--quiet=1"},
                                             {"list", "--format", "xml"},
                                             {"map", "rbd/img", "--bogus"},
                                             {"map", "rbd/img", "--fs", "btrfs"},
                                             {"map", "rbd/img", "--block", "--fs", "xfs"},
                                             {"map", "rbd/img", "--mount", "relative"},
                                             {"map", "rbd/img", "--size", "ten"},
                                             {"map", "rbd/img", "--id", "-admin"},
                                             {"list", "--persist"},
                                             {"unmap"},
                                             {"expand", "img"},
                                             {"expand", "img", "0"},
                                             {"map", "rbd/img", "--key", "AQB"}}) {
    auto c = Parse(bad);
    EXPECT_EQ(c.status().code(), Code::kInvalidArgument) << (bad.empty() ? "(none)" : bad[0]);
  }
}

TEST(CtlArgsTest, AnOptionIsNeverTakenAsTheValueOfTheOneBefore) {
  auto c = Parse({"map", "rbd/img", "--keyfile", "--ro"});
  EXPECT_EQ(c.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(c.status().message(), "--keyfile: missing value");
  // Given with '=', a value is what it is, and its own check judges it.
  auto joined = Parse({"map", "rbd/img", "--mount-options=--x"});
  EXPECT_EQ(joined.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(joined.status().message().find("missing value"), std::string::npos) << joined.status().message();
  EXPECT_TRUE(Parse({"map", "rbd/img", "--keyfile", "/etc/ceph/k", "--ro"}).ok());
}

// --help is made of the option table: every option the parser accepts is
// in it, with its value and the commands it applies to.
TEST(CtlArgsTest, HelpShowsEveryOptionOfTheTable) {
  std::string help = CtlUsage();
  std::vector<CtlOptionDoc> docs = CtlOptionDocs();
  ASSERT_GE(docs.size(), 20u);
  for (const CtlOptionDoc& o : docs) {
    std::string line = (o.alias.empty() ? "" : std::string(o.alias) + ", ") + std::string(o.name) +
                       (o.value.empty() ? "" : " " + std::string(o.value));
    EXPECT_NE(help.find("  " + line + " "), std::string::npos) << line;
    EXPECT_NE(help.find(std::string(o.help)), std::string::npos) << o.name;
    EXPECT_FALSE(o.help.empty()) << o.name;
  }
  EXPECT_NE(help.find("  --cluster NAME"), std::string::npos);
  EXPECT_NE(help.find("[map, expand] a cluster ID"), std::string::npos) << help;
  EXPECT_NE(help.find("  -o, --options OPTS"), std::string::npos) << help;
}

// An argument is quoted by QuoteField: escaped and bounded, never pasted.
TEST(CtlArgsTest, ErrorsQuoteArgumentsEscaped) {
  EXPECT_EQ(Parse({"list\n\x1b[2J"}).status().message(), "unknown command 'list\\n\\x1b[2J' (see nbdkeeperctl --help)");
  EXPECT_EQ(Parse({"map", "rbd/img", "--fs", "ext4\r"}).status().message(), "--fs: 'ext4\\r' (ext4 or xfs)");
  EXPECT_EQ(Parse({"expand", "img", "1\tG"}).status().message(), "SIZE: '1\\tG' is not a size (e.g. 10G, 512M, 1T)");
  EXPECT_LT(Parse({"map", std::string(65536, 'x')}).status().message().size(), 300u);
}

TEST(CtlArgsTest, AnImageSpecHasNoEmptyPart) {
  MapSpec spec;
  EXPECT_TRUE(ParseImageSpec("rbd/ns/img", &spec).ok());
  EXPECT_EQ(spec.rados_namespace, "ns");
  for (std::string bad : {"rbd/", "rbd/img/", "/img", "rbd//", ""}) {
    EXPECT_EQ(ParseImageSpec(bad, &spec).code(), Code::kInvalidArgument) << "'" << bad << "'";
  }
}

TEST(CtlArgsTest, SizesUseBinaryUnits) {
  EXPECT_EQ(*ParseSize("4096"), 4096);
  EXPECT_EQ(*ParseSize("512M"), int64_t{512} << 20);
  EXPECT_EQ(*ParseSize("1t"), int64_t{1} << 40);
  for (const char* bad : {"", "G", "0", "-1G", "1.5G", "99999999999T"}) EXPECT_FALSE(ParseSize(bad).ok()) << bad;
}

TEST(CephxKeyTest, BareKeyOrKeyringSection) {
  EXPECT_EQ(*CephxKeyFrom("AQBkZXltb25vbmU=\n", "admin"), "AQBkZXltb25vbmU=");
  std::string keyring = "[client.other]\n\tkey = AQBvdGhlcg==\n[client.ops]\n\tkey = AQBvcHM=\n\tcaps mon = \"x\"\n";
  EXPECT_EQ(*CephxKeyFrom(keyring, "ops"), "AQBvcHM=");
  auto missing = CephxKeyFrom(keyring, "nobody");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message().find("AQB"), std::string::npos) << "never echo a key";
}

constexpr char kStatus[] = R"({"version":"0.1.0","ready":true,"volumes":[
  {"volume_id":"db","image":"rbd/db","journal_state":"staged","access":"ext4",
   "staging_path":"/var/lib/nbdkeeper/staging/db","targets":["/mnt/db"],"state":"Connected",
   "seconds_in_state":30.0,"device":"/dev/nbd0","pid":42,"restarts":1,"log":"/var/lib/nbdkeeper/logs/db.log",
   "cgroup_mode":"scope","scope":"nbdkeeper-rbd-nbd-db.scope"},
  {"volume_id":"raw","image":"rbd/ns/raw","journal_state":"staged","access":"block",
   "staging_path":"/var/lib/nbdkeeper/staging/raw","targets":[],"state":"Unmapped","device":"/dev/nbd1"},
  {"volume_id":"old","image":"rbd/old","journal_state":"staged","access":"xfs",
   "staging_path":"/var/lib/nbdkeeper/staging/old","targets":[],"state":"StaleBoot",
   "reason":"the node rebooted since this volume was staged","device":"","previous_device":"/dev/nbd2"}]})";

TEST(VolumeTableTest, StatusRowsAreFoundByAnyOfTheirNames) {
  auto status = ParseDaemonStatus(kStatus);
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  ASSERT_EQ(status->volumes.size(), 3u);
  for (const char* key : {"db", "rbd/db", "/dev/nbd0", "/mnt/db", "/var/lib/nbdkeeper/staging/db"}) {
    const VolumeRow* v = FindVolume(*status, key);
    ASSERT_NE(v, nullptr) << key;
    EXPECT_EQ(v->volume_id, "db");
  }
  EXPECT_EQ(FindVolume(*status, "raw")->image, "rbd/ns/raw");
  EXPECT_EQ(FindVolume(*status, "nothing"), nullptr);
  EXPECT_EQ(FindVolume(*status, "/dev/nbd2"), nullptr) << "a stale boot's device is not the volume's";
  EXPECT_EQ(FindVolume(*status, "old")->device, "");
  EXPECT_EQ(status->volumes[1].MountPoint(), "") << "a block volume without a target has none";
  EXPECT_FALSE(ParseDaemonStatus("[]").ok());
}

TEST(VolumeTableTest, TableAndJsonCarryEveryColumn) {
  auto status = ParseDaemonStatus(kStatus);
  ASSERT_TRUE(status.ok());
  std::string table = RenderTable(*status, false);
  for (const char* want :
       {"VOLUME", "LAST HEAL", "rbd/db", "/dev/nbd0", "Connected", "42", "30s ago", "/mnt/db", "Unmapped"}) {
    EXPECT_NE(table.find(want), std::string::npos) << want << "\n" << table;
  }
  EXPECT_EQ(table.find("\033["), std::string::npos) << "no colour off a terminal";
  EXPECT_NE(RenderTable(*status, true).find("\033[32mConnected"), std::string::npos);
  EXPECT_NE(RenderTable(*status, true).find("\033[31mStaleBoot"), std::string::npos);
  EXPECT_EQ(table.find("/dev/nbd2"), std::string::npos) << "no device shown for a stale boot\n" << table;
  std::string json = RenderJson(*status);
  EXPECT_NE(json.find(R"("mount_point":"/mnt/db")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("cgroup_mode":"scope","scope":"nbdkeeper-rbd-nbd-db.scope")"), std::string::npos) << json;
}

TEST(PersistedVolumesTest, RoundTripsAndRejectsMalformedEntries) {
  std::string dir = ::testing::TempDir() + "/persist-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::string path = dir + "/volumes.json";
  EXPECT_TRUE(LoadPersisted(path)->empty()) << "no file: nothing persisted";
  PersistedVolume v;
  ASSERT_TRUE(ParseImageSpec("rbd/db", &v.spec).ok());
  v.spec.mount = "/mnt/db";
  v.spec.keyfile = "/etc/ceph/db.key";
  v.volume_id = "db";
  ASSERT_TRUE(SavePersisted(path, {v}).ok());
  auto back = LoadPersisted(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].spec.Spec(), "rbd/db");
  EXPECT_EQ((*back)[0].spec.mount, "/mnt/db");
  for (const char* bad : {R"({"volumes":[{"volume_id":"db"}]})", R"({"volumes":[{"image":"-x/db","volume_id":"db"}]})",
                          R"({"volumes":[{"image":"rbd/db","volume_id":"../x"}]})", R"([])", "not json"}) {
    std::ofstream(path) << bad;
    EXPECT_FALSE(LoadPersisted(path).ok()) << bad;
  }
  std::filesystem::remove(path);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_EQ(LoadPersisted(path).status().code(), Code::kFailedPrecondition) << "a FIFO never blocks the read";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nbdk::ctl
