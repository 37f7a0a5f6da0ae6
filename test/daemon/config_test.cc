#include "daemon/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace nbdk {
namespace {

Result<ParsedArgs> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "nbdkeeperd");
  return ParseArgs(args);
}

// Expects an InvalidArgument whose message contains every fragment.
void ExpectError(const Status& s, std::initializer_list<const char*> fragments) {
  ASSERT_EQ(s.code(), Code::kInvalidArgument) << s.ToString();
  for (const char* f : fragments) EXPECT_NE(s.message().find(f), std::string::npos) << s.message();
}

TEST(ConfigTest, Defaults) {
  auto r = Parse({});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Config& c = r->config;
  EXPECT_EQ(c.csi_socket_path, "/run/nbdkeeper/csi.sock");
  EXPECT_EQ(c.socket_mode, 0600u);
  EXPECT_EQ(c.state_dir, "/var/lib/nbdkeeper");
  EXPECT_EQ(c.health.host, "127.0.0.1");
  EXPECT_EQ(c.health.port, 9810);
  EXPECT_FALSE(c.node_id.empty());  // the hostname
  EXPECT_EQ(c.io_timeout_ms, 2000u);
  EXPECT_EQ(c.reattach_timeout_s, 300u);
  EXPECT_EQ(c.max_concurrent_attaches, 4u);
}

// The node's place (csi/topology.h): labels from the flag and a per-node
// file, the segments its domain labels name, checked at start.
TEST(ConfigTest, NodeLabelsGiveTheTopologySegmentsAtStart) {
  char path[] = "/tmp/nbdk-labels-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  std::ofstream(path) << "# this node\ntopology.kubernetes.io/zone=z1\n";
  auto r =
      Parse({"--driver-name=rbd.example.io", "--node-labels=topology.kubernetes.io/region=east", "--node-labels-file",
             path, "--domain-labels=topology.kubernetes.io/region,topology.kubernetes.io/zone",
             "--crush-location-labels=topology.kubernetes.io/zone"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->config.topology,
            (TopologySegments{{"topology.rbd.example.io/region", "east"}, {"topology.rbd.example.io/zone", "z1"}}));
  EXPECT_EQ(r->config.node_labels.size(), 2u);
  EXPECT_EQ(r->config.crush_location_labels, (std::vector<std::string>{"topology.kubernetes.io/zone"}));

  ExpectError(Parse({"--node-labels=topology.kubernetes.io/zone=z2", "--node-labels-file", path}).status(),
              {"--node-labels-file", "topology.kubernetes.io/zone is given by --node-labels too"});
  ExpectError(Parse({"--domain-labels=rack"}).status(), {"--domain-labels", "no label rack"});
  ExpectError(Parse({"--node-labels=zone"}).status(), {"--node-labels", "'zone' is not key=value"});
  ExpectError(Parse({"--node-labels-file=/nonexistent/labels"}).status(), {"/nonexistent/labels"});
  ::unlink(path);
  EXPECT_TRUE(Parse({})->config.topology.empty());
}

TEST(ConfigTest, FlagsInBothForms) {
  auto r = Parse({"--csi-endpoint=unix:///tmp/x.sock", "--node-id", "n1", "--socket-mode", "0660", "--health-listen",
                  "[::1]:9999", "--log-level=debug", "--on-stop", "detach", "--max-concurrent-attaches=0"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->config.max_concurrent_attaches, 0u);
  EXPECT_EQ(r->config.csi_socket_path, "/tmp/x.sock");
  EXPECT_EQ(r->config.node_id, "n1");
  EXPECT_EQ(r->config.socket_mode, 0660u);
  EXPECT_EQ(r->config.health.host, "::1");
  EXPECT_EQ(r->config.health.port, 9999);
  EXPECT_EQ(r->config.log_level, LogLevel::kDebug);
  EXPECT_EQ(r->config.stop_policy, StopPolicy::kDetach);
  EXPECT_FALSE(Parse({"--break-dead-locks=false"})->config.break_dead_locks);
  EXPECT_TRUE(Parse({})->config.break_dead_locks);
  EXPECT_FALSE(Parse({"--setmetadata=false"})->config.set_metadata);
  EXPECT_TRUE(Parse({})->config.set_metadata);
  ExpectError(Parse({"--setmetadata=yes"}).status(), {"--setmetadata", "not one of true, false"});
}

TEST(ConfigTest, ChildScopesAreOnByDefaultOverTheSystemBus) {
  auto d = Parse({});
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->config.child_scopes);
  EXPECT_EQ(d->config.systemd_bus, "");
  auto r = Parse({"--child-scopes=off", "--systemd-bus=unix:path=/run/systemd/private"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->config.child_scopes);
  EXPECT_EQ(r->config.systemd_bus, "unix:path=/run/systemd/private");
  EXPECT_TRUE(Parse({"--child-scopes=auto"})->config.child_scopes);
  EXPECT_EQ(Parse({"--child-scopes=on"}).status().code(), Code::kInvalidArgument);
}

// ceph-csi's KMS config: its default path (the ConfigMap's mount in
// ceph-csi's manifests), a flag and a config file key like --ceph-csi-config.
TEST(ConfigTest, KmsConfigDefaultsToCephCsisPath) {
  EXPECT_EQ(Parse({})->config.kms_config, "/etc/ceph-csi-encryption-kms-config/config.json");
  EXPECT_EQ(Parse({"--kms-config=/srv/kms.json"})->config.kms_config, "/srv/kms.json");
  EXPECT_EQ(Parse({"--kms-config", "/srv/kms.json"})->config.kms_config, "/srv/kms.json");
  Config c;
  ASSERT_TRUE(ApplyConfigJson(R"({"kms_config": "/etc/kms/config.json"})", &c).ok());
  EXPECT_EQ(c.kms_config, "/etc/kms/config.json");
  ExpectError(Parse({"--kms-config="}).status(), {"--kms-config", "empty"});
  ExpectError(ApplyConfigJson(R"({"kms_config": 1})", &c), {"field 'kms_config'"});
  EXPECT_NE(UsageText().find("--kms-config"), std::string::npos);
}

TEST(ConfigTest, PathRootsAreCleanAbsoluteDirectoriesOtherThanTheRoot) {
  auto r = Parse({"--csi-root=/opt/nomad/csi", "--mount-roots=/mnt,/srv/data"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->config.csi_root, "/opt/nomad/csi");
  EXPECT_EQ(r->config.mount_roots, (std::vector<std::string>{"/mnt", "/srv/data"}));
  for (const char* bad : {"--csi-root=/", "--csi-root=relative", "--csi-root=/a/../b", "--kubelet-root=/",
                          "--kubelet-root=/a/", "--mount-roots=/mnt,/", "--mount-roots=/mnt/"}) {
    EXPECT_EQ(Parse({bad}).status().code(), Code::kInvalidArgument) << bad;
  }
}

// --kubelet-root (JSON kubelet_root), the former name, sets the same root;
// the last of the two given wins, as for any flag given twice.
TEST(ConfigTest, KubeletRootIsAnAliasOfCsiRoot) {
  EXPECT_EQ(Config{}.csi_root, "/var/lib/kubelet");
  EXPECT_EQ(Parse({"--kubelet-root=/srv/kubelet"})->config.csi_root, "/srv/kubelet");
  EXPECT_EQ(Parse({"--kubelet-root", "/srv/kubelet"})->config.csi_root, "/srv/kubelet");
  EXPECT_EQ(Parse({"--kubelet-root=/a", "--csi-root=/b"})->config.csi_root, "/b");
  EXPECT_EQ(Parse({"--csi-root=/b", "--kubelet-root=/a"})->config.csi_root, "/a");
  Config c;
  ASSERT_TRUE(ApplyConfigJson(R"({"kubelet_root": "/srv/kubelet"})", &c).ok());
  EXPECT_EQ(c.csi_root, "/srv/kubelet");
  ASSERT_TRUE(ApplyConfigJson(R"({"csi_root": "/nomad-csi"})", &c).ok());
  EXPECT_EQ(c.csi_root, "/nomad-csi");
  ExpectError(Parse({"--kubelet-root=relative"}).status(), {"--kubelet-root", "clean absolute path"});
  ExpectError(ApplyConfigJson(R"({"kubelet_root": "/"})", &c), {"field 'kubelet_root'"});
  EXPECT_EQ(c.csi_root, "/nomad-csi") << "a refused value changes nothing";
  EXPECT_EQ(Parse({"--kubelet_root=/a"}).status().code(), Code::kInvalidArgument) << "flags use dashes";
  EXPECT_NE(UsageText().find("--csi-root"), std::string::npos);
  EXPECT_NE(UsageText().find("\n  --kubelet-root VALUE        the former name of --csi-root\n"), std::string::npos)
      << UsageText();
}

// Bare metal (issue 32): where the ceph.conf files are the clusters when
// there is no ceph-csi config.json.
TEST(ConfigTest, CephDirDefaultsToEtcCeph) {
  EXPECT_EQ(Parse({})->config.ceph_dir, "/etc/ceph");
  EXPECT_EQ(Parse({"--ceph-dir=/srv/ceph"})->config.ceph_dir, "/srv/ceph");
  EXPECT_EQ(Parse({"--ceph-dir=etc"}).status().code(), Code::kInvalidArgument);
}

// The stable device names' root, or none.
TEST(ConfigTest, DeviceLinksAreACleanRootOrOff) {
  EXPECT_EQ(Parse({})->config.device_links, "/dev/nbdkeeper");
  EXPECT_EQ(Parse({"--device-links", "/run/links"})->config.device_links, "/run/links");
  EXPECT_EQ(Parse({"--device-links=off"})->config.device_links, "");
  for (const char* bad : {"--device-links=/", "--device-links=rel", "--device-links=/a/"}) {
    EXPECT_EQ(Parse({bad}).status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST(ConfigTest, HelpAndVersion) {
  EXPECT_EQ(Parse({"--help"})->action, Action::kHelp);
  EXPECT_EQ(Parse({"--version"})->action, Action::kVersion);
  EXPECT_NE(UsageText().find("--csi-endpoint"), std::string::npos);
}

TEST(ConfigTest, EachBadFlagNamesItself) {
  ExpectError(Parse({"--bogus", "1"}).status(), {"unknown flag '--bogus'"});
  ExpectError(Parse({"--node-id"}).status(), {"--node-id", "missing value"});
  // Last on the line, an unknown flag is named as unknown, not as missing its value.
  ExpectError(Parse({"--node-id", "n1", "--bogus"}).status(), {"unknown flag '--bogus'"});
  // A flag given without its value does not take the next flag as its value.
  ExpectError(Parse({"--node-id", "--log-level=debug"}).status(), {"--node-id", "missing value"});
  ExpectError(Parse({"positional"}).status(), {"unexpected argument 'positional'"});
  ExpectError(Parse({"--csi-endpoint", "tcp://1.2.3.4:5"}).status(), {"--csi-endpoint", "only unix://"});
  ExpectError(Parse({"--csi-endpoint", "relative.sock"}).status(), {"--csi-endpoint", "absolute"});
  ExpectError(Parse({"--csi-endpoint", "/" + std::string(200, 'a')}).status(), {"longer than 107"});
  ExpectError(Parse({"--socket-mode", "0999"}).status(), {"--socket-mode", "octal"});
  ExpectError(Parse({"--socket-mode", "01777"}).status(), {"--socket-mode"});
  ExpectError(Parse({"--health-listen", "nocolon"}).status(), {"--health-listen", "host:port"});
  ExpectError(Parse({"--health-listen", "1.2.3.4:70000"}).status(), {"--health-listen", "port"});
  ExpectError(Parse({"--health-listen", "999.1.1.1:80"}).status(), {"--health-listen", "'999.1.1.1'", "numeric"});
  ExpectError(Parse({"--health-listen", "localhost:80"}).status(), {"--health-listen", "'localhost'"});
  ExpectError(Parse({"--log-level", "loud"}).status(), {"--log-level", "'loud'"});
  ExpectError(Parse({"--state-dir", "rel/dir"}).status(), {"--state-dir", "absolute"});
  ExpectError(Parse({"--driver-name", "-bad"}).status(), {"--driver-name", "begin and end"});
  ExpectError(Parse({"--driver-name", "a b"}).status(), {"--driver-name", "' '"});
  ExpectError(Parse({"--driver-name", std::string(64, 'a')}).status(), {"--driver-name", "63"});
  ExpectError(Parse({"--io-timeout-ms", "10"}).status(), {"--io-timeout-ms", "smaller than 1000"});
  ExpectError(Parse({"--io-timeout-ms", "abc"}).status(), {"--io-timeout-ms", "not a non-negative integer"});
  ExpectError(Parse({"--reattach-timeout", "99999"}).status(), {"--reattach-timeout", "larger than 3600"});
  ExpectError(Parse({"--on-stop", "kill"}).status(), {"--on-stop", "leave, detach"});
  ExpectError(Parse({"--node-id", ""}).status(), {"--node-id", "empty"});
  ExpectError(Parse({"--break-dead-locks", "maybe"}).status(), {"--break-dead-locks", "true, false"});
  ExpectError(Parse({"--key-dir", "keys"}).status(), {"--key-dir", "absolute"});
}

class ConfigFileTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& body) {
    std::ofstream(path_) << body;
    return path_;
  }
  void TearDown() override { std::remove(path_.c_str()); }
  // One file per test process: CTest runs the tests of this binary in parallel.
  std::string path_ = ::testing::TempDir() + "/nbdk_config_test." + std::to_string(::getpid()) + ".json";
};

TEST_F(ConfigFileTest, FileThenFlagsOverride) {
  auto r = Parse({"--node-id", "from-flag", "--config",
                  Write(R"({"node_id": "from-file", "state_dir": "/srv/nbdk", "io_timeout_ms": 7000})")});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->config.node_id, "from-flag");
  EXPECT_EQ(r->config.state_dir, "/srv/nbdk");
  EXPECT_EQ(r->config.io_timeout_ms, 7000u);
}

TEST_F(ConfigFileTest, EachBadFieldNamesItself) {
  ExpectError(Parse({"--config", Write("{nope")}).status(), {path_.c_str(), "invalid JSON at offset"});
  ExpectError(Parse({"--config", Write("[1]")}).status(), {"top level must be a JSON object"});
  ExpectError(Parse({"--config", Write(R"({"colour": "red"})")}).status(), {"field 'colour'", "unknown setting"});
  ExpectError(Parse({"--config", Write(R"({"io_timeout_ms": "5000"})")}).status(),
              {"field 'io_timeout_ms'", "non-negative integer"});
  ExpectError(Parse({"--config", Write(R"({"node_id": 3})")}).status(), {"field 'node_id'", "a string"});
  ExpectError(Parse({"--config", Write(R"({"state_dir": "x"})")}).status(), {"field 'state_dir'", "absolute"});
  ExpectError(Parse({"--config", Write(R"({"io_timeout_ms": -5})")}).status(), {"field 'io_timeout_ms'"});
}

TEST_F(ConfigFileTest, MissingFileIsNamed) {
  auto r = Parse({"--config", "/nonexistent/nbdk.json"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/nbdk.json"), std::string::npos);
}

TEST(ConfigTest, BadFileChangesNothing) {
  Config c;
  c.node_id = "keep";
  Status s = ApplyConfigJson(R"({"node_id": "changed", "log_level": "loud"})", &c);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(c.node_id, "keep");
}

TEST(EndpointTest, UnixForms) {
  EXPECT_EQ(*ParseUnixEndpoint("unix:///run/a.sock"), "/run/a.sock");
  EXPECT_EQ(*ParseUnixEndpoint("/run/a.sock"), "/run/a.sock");
  EXPECT_FALSE(ParseUnixEndpoint("unix://").ok());
  EXPECT_FALSE(ParseUnixEndpoint("").ok());
  EXPECT_FALSE(ParseUnixEndpoint("unix:relative").ok());
}

TEST(EndpointTest, HostPortForms) {
  EXPECT_EQ(ParseHostPort(":80")->host, "0.0.0.0");
  EXPECT_EQ(ParseHostPort("10.1.2.3:8080")->port, 8080);
  EXPECT_EQ(ParseHostPort("[fe80::1]:1")->host, "fe80::1");
  EXPECT_FALSE(ParseHostPort("host:").ok());
  EXPECT_FALSE(ParseHostPort("host:-1").ok());
}

}  // namespace
}  // namespace nbdk
