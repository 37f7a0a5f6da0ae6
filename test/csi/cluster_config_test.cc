#include "csi/cluster_config.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace nbdk {
namespace {

void ExpectInvalid(std::string_view json, std::string_view mentions) {
  auto r = ParseClusterConfig(json);
  ASSERT_FALSE(r.ok()) << json;
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << json;
  EXPECT_NE(r.status().message().find(mentions), std::string::npos)
      << "'" << r.status().message() << "' should mention '" << mentions << "'";
}

TEST(ClusterConfigTest, ParsesCephCsiFileWithEveryKnownKey) {
  auto r = ParseClusterConfig(R"([
    {"clusterID": "rook-ceph", "monitors": ["10.0.0.1:6789", "10.0.0.2:6789"],
     "rbd": {"radosNamespace": "tenant-a", "mirrorDaemonCount": 2, "netNamespaceFilePath": ""},
     "cephFS": {"subvolumeGroup": "csi", "kernelMountOptions": "ms_mode=secure"},
     "nfs": {"netNamespaceFilePath": ""},
     "readAffinity": {"enabled": true, "crushLocationLabels": ["topology.kubernetes.io/zone"]}},
    {"clusterID": "second", "monitors": ["[v2:10.1.0.1:3300,v1:10.1.0.1:6789]"]}
  ])");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->entries().size(), 2u);
  auto a = r->Find("rook-ceph");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->monitors, (std::vector<std::string>{"10.0.0.1:6789", "10.0.0.2:6789"}));
  EXPECT_EQ(a->rados_namespace, "tenant-a");
  EXPECT_TRUE(a->read_affinity);
  EXPECT_EQ(a->crush_location_labels, (std::vector<std::string>{"topology.kubernetes.io/zone"}));
  auto b = r->Find("second");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->monitors.size(), 1u);
  EXPECT_EQ(b->rados_namespace, "");
  EXPECT_FALSE(b->read_affinity);
}

TEST(ClusterConfigTest, ReadAffinityMustBeWhatCephCsiReads) {
  const std::string entry = R"([{"clusterID": "c", "monitors": ["m:6789"], "readAffinity": )";
  auto off = ParseClusterConfig(entry + R"({"crushLocationLabels": []}}])");
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_FALSE(off->Find("c")->read_affinity);
  const std::pair<const char*, const char*> cases[] = {
      {"true", "readAffinity: expected an object"},
      {R"({"enabled": "true"})", "readAffinity.enabled: expected true or false"},
      {R"({"enabled": true, "crushLocationLabels": "zone"})", "readAffinity.crushLocationLabels: expected an array"},
      {R"({"enabled": true, "crushLocationLabels": [1]})", "crushLocationLabels[0]: expected a string"},
      {R"({"enabled": true, "crushLocationLabels": ["zone", "a,b"]})", "crushLocationLabels[1]: 'a,b'"},
  };
  for (const auto& [value, error] : cases) ExpectInvalid(entry + value + "}]", error);
}

TEST(ClusterConfigTest, IgnoresUnknownKeysAndNulls) {
  auto r = ParseClusterConfig(
      R"([{"clusterID": "c", "monitors": ["m:6789"], "futureKey": {"x": [1]}, "rbd": null, "cephFS": 7}])");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->Find("c")->rados_namespace, "");
}

TEST(ClusterConfigTest, MatchesKeysCaseInsensitivelyLikeGo) {
  auto r = ParseClusterConfig(R"([{"ClusterId": "c", "Monitors": ["m:6789"], "RBD": {"radosnamespace": "ns"}}])");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->Find("c")->rados_namespace, "ns");
}

TEST(ClusterConfigTest, EmptyArrayHasNoClusters) {
  auto r = ParseClusterConfig("[]");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->Find("x").status().code(), Code::kFailedPrecondition);
}

// The node lacks configuration: never NOT_FOUND, which a CO reads as "no such volume".
TEST(ClusterConfigTest, UnknownClusterIsFailedPreconditionNamingIt) {
  auto r = ParseClusterConfig(R"([{"clusterID": "c", "monitors": ["m"]}])");
  ASSERT_TRUE(r.ok());
  auto missing = r->Find("other-cluster");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(missing.status().message().find("'other-cluster'"), std::string::npos);
}

TEST(ClusterConfigTest, RejectsBadJsonAndShapes) {
  ExpectInvalid("", "invalid JSON at offset 0");
  ExpectInvalid(R"([{"clusterID": "c", "monitors": ["m"])", "invalid JSON");
  ExpectInvalid(R"([{"clusterID": "c", "monitors": ["m"]}] x)", "invalid JSON");
  ExpectInvalid(R"({"clusterID": "c"})", "top level must be a JSON array");
  ExpectInvalid(R"([{"clusterID": "c", "monitors": ["m"]}, 3])", "entry 1: expected an object");
}

TEST(ClusterConfigTest, RejectsBadFieldsNamingEntryAndField) {
  ExpectInvalid(R"([{"monitors": ["m"]}])", "entry 0: clusterID: missing");
  ExpectInvalid(R"([{"clusterID": null, "monitors": ["m"]}])", "entry 0: clusterID: missing");
  ExpectInvalid(R"([{"clusterID": 5, "monitors": ["m"]}])", "entry 0: clusterID: expected a string");
  ExpectInvalid(R"([{"clusterID": "", "monitors": ["m"]}])", "entry 0: clusterID: must not be empty");
  ExpectInvalid(R"([{"clusterID": "a", "monitors": ["m"]}, {"clusterID": "b"}])", "entry 1: monitors: missing");
  ExpectInvalid(R"([{"clusterID": "c", "monitors": []}])", "entry 0: monitors: must not be empty");
  ExpectInvalid(R"([{"clusterID": "c", "monitors": "m:6789"}])", "entry 0: monitors: expected an array");
  ExpectInvalid(R"([{"clusterID": "c", "monitors": ["m", 1]}])", "entry 0: monitors[1]: expected a string");
  ExpectInvalid(R"([{"clusterID": "c", "monitors": ["m", ""]}])", "entry 0: monitors[1]: must not be empty");
  ExpectInvalid(R"([{"clusterID": "c", "monitors": ["m"], "rbd": []}])", "entry 0: rbd: expected an object");
  ExpectInvalid(R"([{"clusterID": "c", "monitors": ["m"], "rbd": {"radosNamespace": 1}}])",
                "entry 0: rbd.radosNamespace: expected a string");
}

TEST(ClusterConfigTest, RejectsDuplicateClusterIds) {
  ExpectInvalid(R"([{"clusterID": "c", "monitors": ["a"]}, {"clusterID": "d", "monitors": ["b"]},
                   {"clusterID": "c", "monitors": ["c"]}])",
                "entry 2: clusterID: 'c' appears in an earlier entry");
}

TEST(ClusterConfigTest, LoadsAFileAndNamesItInErrors) {
  char dir[] = "/tmp/nbdk-cluster-config-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/config.json";
  std::ofstream(path) << R"([{"clusterID": "c", "monitors": ["m:6789"]}])";
  auto ok = LoadClusterConfig(path);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_TRUE(ok->Find("c").ok());

  std::ofstream(path) << "[{";
  auto bad = LoadClusterConfig(path);
  EXPECT_EQ(bad.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(bad.status().message().find(path), std::string::npos) << bad.status().message();

  auto missing = LoadClusterConfig(std::string(dir) + "/absent.json");
  EXPECT_EQ(missing.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(missing.status().message().find("ceph_csi_config"), std::string::npos);
  ::unlink(path.c_str());
  ::rmdir(dir);
}

// Without config.json, each NAME.conf with an fsid is a cluster; config.json,
// when there, is the only source.
TEST(ClusterConfigTest, CephConfFilesAreTheClustersWithoutConfigJson) {
  char dir[] = "/tmp/nbdk-cluster-confs-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string d = dir;
  std::ofstream(d + "/ceph.conf") << "[global]\nfsid = 11111111-aaaa\nmon_host = 10.0.0.1,10.0.0.2\n";
  std::ofstream(d + "/backup.conf") << "[global]\nfsid = 22222222-bbbb\n";
  std::ofstream(d + "/nofsid.conf") << "[global]\nmon_host = 10.0.0.3\n";
  std::ofstream(d + "/broken.conf") << "[global\n";
  std::ofstream(d + "/rbdmap") << "not a conf\n";
  auto clusters = LoadClusters(d + "/absent.json", d);
  ASSERT_TRUE(clusters.ok()) << clusters.status().ToString();
  ASSERT_EQ(clusters->entries().size(), 2u);
  auto main = clusters->Find("11111111-aaaa");
  ASSERT_TRUE(main.ok()) << main.status().ToString();
  EXPECT_EQ(main->name, "ceph");
  EXPECT_EQ(main->ceph_conf, d + "/ceph.conf");
  EXPECT_EQ(main->monitors, (std::vector<std::string>{"10.0.0.1", "10.0.0.2"}));
  EXPECT_EQ(main->CephConfOr("/etc/other.conf"), d + "/ceph.conf");
  auto backup = clusters->Find("22222222-bbbb");
  ASSERT_TRUE(backup.ok());
  EXPECT_TRUE(backup->monitors.empty()) << "librados and rbd-nbd read the conf's own mon settings";
  auto unknown = clusters->Find("33333333");
  EXPECT_EQ(unknown.status().code(), Code::kFailedPrecondition);
  for (const std::string& named : {d + "/nofsid.conf: no fsid", d + "/broken.conf: line 1", std::string("fsid")}) {
    EXPECT_NE(unknown.status().message().find(named), std::string::npos) << unknown.status().message();
  }

  std::ofstream(d + "/config.json") << R"([{"clusterID": "c", "monitors": ["m:6789"]}])";
  auto json = LoadClusters(d + "/config.json", d);
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  ASSERT_EQ(json->entries().size(), 1u);
  EXPECT_EQ(json->entries()[0].cluster_id, "c");
  EXPECT_EQ(json->entries()[0].CephConfOr("/etc/other.conf"), "/etc/other.conf");
  std::filesystem::remove_all(d);
}

}  // namespace
}  // namespace nbdk
