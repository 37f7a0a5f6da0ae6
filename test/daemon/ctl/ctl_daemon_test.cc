// nbdkeeperctl against a real nbdkeeperd on the host (no nbd, no Ceph): the
// read-only commands, and each error a user meets first - daemon not
// running, no permission on the socket, no such volume, no key - with its
// documented exit status and a message naming the fix.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/command.h"
#include "test/common/daemon_process.h"
#include "test/common/vm_command.h"

namespace nbdk {
namespace {

struct Ran {
  int exit = -1;
  std::string output;
};

class CtlDaemonTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/nbdk-ctl-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::ofstream(dir_ + "/ceph-csi.json") << R"([{"clusterID": "c1", "monitors": ["127.0.0.1:1"]},
                                                {"clusterID": "c2", "monitors": ["127.0.0.2:1"]}])";
    // The daemon's config file, which the CLI reads too (--config).
    std::ofstream(dir_ + "/nbdkeeper.json")
        << R"({"ceph_csi_config": ")" << dir_ << R"(/ceph-csi.json", "state_dir": ")" << dir_ << R"(/state"})";
    daemon_ = std::make_unique<test::DaemonProcess>(NBDKEEPERD_PATH, dir_);
    ASSERT_TRUE(daemon_->Start({"--config", dir_ + "/nbdkeeper.json"})) << daemon_->Log();
    ASSERT_TRUE(daemon_->WaitReady(10000)) << daemon_->Log();
  }
  static void TearDownTestSuite() {
    daemon_->Stop(SIGTERM);
    daemon_.reset();
    std::filesystem::remove_all(dir_);
  }

  static Ran Ctl(std::vector<std::string> args, const std::string& endpoint = "") {
    std::vector<std::string> argv = {NBDKEEPERCTL_PATH, "--config=" + dir_ + "/nbdkeeper.json",
                                     "--csi-endpoint=" + (endpoint.empty() ? daemon_->endpoint() : endpoint),
                                     "--health=127.0.0.1:" + std::to_string(daemon_->health_port()),
                                     "--persist-file=" + dir_ + "/volumes.json"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = vmtest::RunCommand(argv, true);
    if (!r.ok()) return {};
    return {r->exit.code, r->stdout_text};
  }

  static std::string dir_;
  static std::unique_ptr<test::DaemonProcess> daemon_;
};

std::string CtlDaemonTest::dir_;
std::unique_ptr<test::DaemonProcess> CtlDaemonTest::daemon_;

TEST_F(CtlDaemonTest, HealthListAndJsonOfAnEmptyNode) {
  Ran health = Ctl({"health"});
  EXPECT_EQ(health.exit, 0) << health.output;
  EXPECT_NE(health.output.find("ready, 0/0 volumes connected"), std::string::npos) << health.output;
  Ran list = Ctl({"list"});
  EXPECT_EQ(list.exit, 0);
  EXPECT_NE(list.output.find("VOLUME"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("(no volumes)"), std::string::npos) << list.output;
  Ran json = Ctl({"status", "--json"});
  EXPECT_EQ(json.exit, 0);
  EXPECT_EQ(json.output, "[]\n");
}

TEST_F(CtlDaemonTest, NotRunningIsExit3AndSaysHowToStartIt) {
  Ran r = Ctl({"list"}, "unix://" + dir_ + "/no-daemon.sock");
  EXPECT_EQ(r.exit, 3) << r.output;
  EXPECT_NE(r.output.find("nbdkeeperd is not running"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("systemctl start nbdkeeperd"), std::string::npos) << r.output;
}

TEST_F(CtlDaemonTest, NoPermissionOnTheSocketIsExit4) {
  std::vector<std::string> argv = {"setpriv",
                                   "--reuid=65534",
                                   "--regid=65534",
                                   "--clear-groups",
                                   NBDKEEPERCTL_PATH,
                                   "--csi-endpoint=" + daemon_->endpoint(),
                                   "list"};
  auto r = vmtest::RunCommand(argv, true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exit.code, 4) << r->stdout_text;
  EXPECT_NE(r->stdout_text.find("no permission"), std::string::npos) << r->stdout_text;
}

TEST_F(CtlDaemonTest, UnknownVolumesAreExit5) {
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"unmap", "rbd/nothing"}, {"logs", "nothing"}, {"expand", "nothing", "1G"}}) {
    Ran r = Ctl(args);
    EXPECT_EQ(r.exit, 5) << args[0] << ": " << r.output;
    EXPECT_NE(r.output.find("nbdkeeperctl list"), std::string::npos) << r.output;
  }
}

TEST_F(CtlDaemonTest, MapNamesWhatIsMissingBeforeAnyCall) {
  Ran two_clusters = Ctl({"map", "rbd/img"});
  EXPECT_EQ(two_clusters.exit, 2) << two_clusters.output;
  EXPECT_NE(two_clusters.output.find("name one with --cluster"), std::string::npos) << two_clusters.output;
  Ran no_key = Ctl({"map", "rbd/img", "--cluster", "c1", "--keyfile", dir_ + "/absent.key"});
  EXPECT_EQ(no_key.exit, 2) << no_key.output;
  EXPECT_NE(no_key.output.find("--keyfile"), std::string::npos) << no_key.output;
  Ran bad = Ctl({"map", "rbd"});
  EXPECT_EQ(bad.exit, 2) << bad.output;
  Ran sized_snapshot = Ctl({"map", "rbd/img@monday", "--size", "1G", "--cluster", "c1"});
  EXPECT_EQ(sized_snapshot.exit, 2) << sized_snapshot.output;
  EXPECT_NE(sized_snapshot.output.find("--size"), std::string::npos) << sized_snapshot.output;
  EXPECT_EQ(daemon_->WaitReady(1000), true) << "the daemon is still serving";
}

// An argument's control characters never reach the terminal: each error is
// one line with them escaped, whether the CLI quoted the argument itself
// (an unknown command, volume) or a lower layer pasted it (an endpoint).
TEST_F(CtlDaemonTest, ErrorsAreOneEscapedLine) {
  const std::string evil = "x\n\x1b[2J\x1b]0;owned\x07";
  const std::string shown = "x\\n\\x1b[2J\\x1b]0;owned\\x07";
  Ran command = Ctl({evil});
  EXPECT_EQ(command.exit, 2);
  EXPECT_EQ(command.output, "nbdkeeperctl: unknown command '" + shown + "' (see nbdkeeperctl --help)\n");
  Ran unmap = Ctl({"unmap", "rbd/" + evil});
  EXPECT_EQ(unmap.exit, 5);
  EXPECT_EQ(unmap.output, "nbdkeeperctl: no volume 'rbd/" + shown + "' is mapped (see nbdkeeperctl list)\n");
  Ran endpoint = Ctl({"list"}, "tcp://" + evil);
  EXPECT_EQ(endpoint.exit, 2);
  EXPECT_NE(endpoint.output.find(shown), std::string::npos) << endpoint.output;
  EXPECT_EQ(endpoint.output.find('\n'), endpoint.output.size() - 1) << endpoint.output;
  Ran huge = Ctl({"unmap", std::string(65536, 'v')});
  EXPECT_EQ(huge.exit, 5);
  EXPECT_LT(huge.output.size(), 300u) << huge.output.substr(0, 300);
  for (const Ran& r : {command, unmap, endpoint, huge}) {
    for (char c : r.output.substr(0, r.output.size() - 1)) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << r.output;
  }
}

TEST_F(CtlDaemonTest, ApplyOfNothingPersistedIsQuick) {
  Ran r = Ctl({"apply"});
  EXPECT_EQ(r.exit, 0) << r.output;
  EXPECT_NE(r.output.find("applied 0 persisted volume(s)"), std::string::npos) << r.output;
}

// A bare-metal host (issue 32): no ceph-csi config.json, only ceph.conf and a
// keyring. The CLI finds the cluster and key there, and the daemon reaches
// for the same cluster through the same file (no cluster answers at
// 127.0.0.1:1: its error names the conf, the monitors and the user).
TEST(CtlCephConfTest, CephConfAndAKeyringAreEnough) {
  char tmpl[] = "/tmp/nbdk-ctl-conf-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  std::filesystem::create_directories(dir + "/ceph");
  std::ofstream(dir + "/ceph/ceph.conf") << "[global]\n\tfsid = 6c4d5a1e-0000-4000-8000-000000000001\n"
                                         << "\tmon host = 127.0.0.1:1\n[client]\n\tkeyring = " << dir
                                         << "/ceph/$cluster.$name.keyring\n";
  std::ofstream(dir + "/ceph/ceph.client.admin.keyring") << "[client.admin]\n\tkey = AQBhZG1pbg==\n";
  std::ofstream(dir + "/nbdkeeper.json") << R"({"ceph_csi_config": ")" << dir << R"(/absent.json", "ceph_dir": ")"
                                         << dir << R"(/ceph", "state_dir": ")" << dir << R"(/state", "key_dir": ")"
                                         << dir << R"(/keys"})";
  test::DaemonProcess daemon(NBDKEEPERD_PATH, dir);
  ASSERT_TRUE(daemon.Start({"--config", dir + "/nbdkeeper.json"})) << daemon.Log();
  ASSERT_TRUE(daemon.WaitReady(10000)) << daemon.Log();
  auto ctl = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {
        NBDKEEPERCTL_PATH, "--config=" + dir + "/nbdkeeper.json", "--csi-endpoint=" + daemon.endpoint(),
        "--health=127.0.0.1:" + std::to_string(daemon.health_port()), "--persist-file=" + dir + "/volumes.json"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = vmtest::RunCommand(argv, true);
    return r.ok() ? Ran{r->exit.code, r->stdout_text} : Ran{};
  };
  Ran map = ctl({"map", "img", "--block"});
  EXPECT_EQ(map.exit, 1) << map.output << daemon.Log();
  EXPECT_EQ(map.output.find("cluster ID"), std::string::npos) << "the daemon found the cluster: " << map.output;
  for (const std::string& part :
       {std::string("map rbd/img: "), "monitors 127.0.0.1:1 (conf " + dir + "/ceph/ceph.conf)",
        std::string("as client.admin")}) {
    EXPECT_NE(map.output.find(part), std::string::npos) << part << " not in: " << map.output;
  }
  // A snapshot: the daemon takes it (its volume context and read-only
  // capability pass) and reaches for the same cluster.
  Ran snapshot = ctl({"map", "img@monday", "--block"});
  EXPECT_EQ(snapshot.exit, 1) << snapshot.output << daemon.Log();
  for (const std::string& part : {std::string("map rbd/img@monday: "), std::string("monitors 127.0.0.1:1")}) {
    EXPECT_NE(snapshot.output.find(part), std::string::npos) << part << " not in: " << snapshot.output;
  }
  Ran other = ctl({"map", "img", "--block", "--cluster", "backup"});
  EXPECT_EQ(other.exit, 2) << other.output;
  EXPECT_NE(other.output.find("--cluster 'backup': no such cluster"), std::string::npos) << other.output;
  daemon.Stop(SIGTERM);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nbdk
