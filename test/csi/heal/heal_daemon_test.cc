// The real nbdkeeperd healing a journal written beforehand, on a host with
// no nbd: a record from another boot (StaleBoot) and one whose device the
// kernel does not have (Expired). Ready only after healing; both volumes
// report an abnormal VolumeCondition that says why, /status calls the stale
// one StaleBoot without its old device; the stale one unstages. A third
// record damaged on disk is named in the log, /status and /metrics, and its
// mount is left alone, also by its unstage.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <ostream>
#include <string>

#include "csi/proto/csi.grpc.pb.h"
#include "journal/node_boot_id.h"
#include "journal/node_journal.h"
#include "journal/node_record_frame.h"
#include "test/common/daemon_process.h"
#include "test/common/http_client.h"

namespace nbdk {
namespace {

VolumeRecord Record(const std::string& id, const std::string& boot_id, const std::string& staging) {
  VolumeRecord r;
  r.volume_id = id;
  r.cluster_id = "test";
  r.pool = "rbd";
  r.image = id;
  r.user_id = "nbdk";
  r.keyfile_path = staging + "/no-key";
  r.nbd_device = "/dev/nbd900";
  r.cookie = id;
  r.fs_type = "ext4";
  r.staging_path = staging;
  r.rbd_nbd_pid = 999999;
  r.boot_id = boot_id;
  r.state = VolumeState::kStaged;
  return r;
}

class HealDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nbdk-heal-daemon-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  csi::v1::VolumeCondition Condition(csi::v1::Node::Stub& node, const std::string& id) {
    csi::v1::NodeGetVolumeStatsRequest req;
    req.set_volume_id(id);
    req.set_volume_path(dir_ + "/staging/" + id);
    grpc::ClientContext ctx;
    csi::v1::NodeGetVolumeStatsResponse resp;
    grpc::Status s = node.NodeGetVolumeStats(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << id << ": " << s.error_message();
    return resp.volume_condition();
  }

  std::string dir_;
};

TEST_F(HealDaemonTest, StaleBootAndExpiredVolumesAreReportedAndTheStaleOneUnstages) {
  auto boot = ReadBootId();
  ASSERT_TRUE(boot.ok());
  std::filesystem::create_directories(dir_ + "/state");
  std::filesystem::create_directories(dir_ + "/staging/vol-stale");
  {
    auto journal = NodeJournal::Open(dir_ + "/state/journal");
    ASSERT_TRUE(journal.ok()) << journal.status().ToString();
    VolumeRecord stale = Record("vol-stale", "00000000-0000-0000-0000-000000000000", dir_ + "/staging/vol-stale");
    VolumeRecord gone = Record("vol-gone", *boot, dir_ + "/staging/vol-gone");
    gone.nbd_device = "/dev/nbd901";
    ASSERT_TRUE(journal->Put(stale).ok());
    ASSERT_TRUE(journal->Put(gone).ok());
  }
  // The keys a crash left: one of a journaled volume, which stays, and
  // one of a volume the journal no longer holds, which goes.
  std::string keys = dir_ + "/keys";
  std::filesystem::create_directory(keys);
  std::filesystem::permissions(keys, std::filesystem::perms::owner_all);
  std::ofstream(keys + "/vol-stale.key") << "AQD-key==\n";
  std::ofstream(keys + "/vol-unjournaled.key") << "AQD-key==\n";
  test::DaemonProcess daemon(NBDKEEPERD_PATH, dir_);
  ASSERT_TRUE(daemon.Start({"--key-dir=" + keys})) << daemon.Log();
  for (int i = 0; i < 500 && test::HttpGet(daemon.health_port(), "/readyz").status != 200; ++i) usleep(10000);
  ASSERT_EQ(test::HttpGet(daemon.health_port(), "/readyz").status, 200) << daemon.Log();
  for (int i = 0; i < 500 && std::filesystem::exists(keys + "/vol-unjournaled.key"); ++i) usleep(10000);
  std::string log = daemon.Log();
  EXPECT_TRUE(std::filesystem::exists(keys + "/vol-stale.key"));
  EXPECT_FALSE(std::filesystem::exists(keys + "/vol-unjournaled.key")) << log;
  EXPECT_NE(log.find("event=stale_key_files_removed count=1 files=vol-unjournaled.key"), std::string::npos) << log;
  EXPECT_NE(log.find("event=heal_decision volume=vol-stale decision=StaleBoot"), std::string::npos) << log;
  EXPECT_NE(log.find("event=heal_decision volume=vol-gone decision=Expired"), std::string::npos) << log;
  EXPECT_LT(log.find("event=healed"), log.find("event=ready")) << "ready before healing finished";

  auto node = csi::v1::Node::NewStub(grpc::CreateChannel(daemon.endpoint(), grpc::InsecureChannelCredentials()));
  auto stale = Condition(*node, "vol-stale");
  EXPECT_TRUE(stale.abnormal());
  EXPECT_NE(stale.message().find("rebooted"), std::string::npos) << stale.message();
  auto gone = Condition(*node, "vol-gone");
  EXPECT_TRUE(gone.abnormal());
  EXPECT_NE(gone.message().find("expired"), std::string::npos) << gone.message();
  EXPECT_NE(gone.message().find("/dev/nbd901 is no longer configured"), std::string::npos) << gone.message();

  // /status neither calls it Unmapped nor shows the old boot's device as its.
  std::string status = test::HttpGet(daemon.health_port(), "/status").body;
  EXPECT_NE(status.find(R"("volume_id":"vol-stale")"), std::string::npos) << status;
  EXPECT_NE(status.find(R"("state":"StaleBoot")"), std::string::npos) << status;
  EXPECT_NE(status.find(R"("device":"","previous_device":"/dev/nbd900")"), std::string::npos) << status;
  EXPECT_EQ(status.find("Unmapped"), std::string::npos) << status;
  // Per volume, every state: 1 for its current one.
  std::string metrics = test::HttpGet(daemon.health_port(), "/metrics").body;
  EXPECT_NE(metrics.find(R"(nbdkeeper_volume_state{volume="vol-gone",image="rbd/vol-gone",state="Expired"} 1)"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find(R"(nbdkeeper_volume_state{volume="vol-gone",image="rbd/vol-gone",state="Connected"} 0)"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("nbdkeeper_reattach_seconds_count 0"), std::string::npos) << metrics;

  csi::v1::NodeUnstageVolumeRequest req;
  req.set_volume_id("vol-stale");
  req.set_staging_target_path(dir_ + "/staging/vol-stale");
  grpc::ClientContext ctx;
  csi::v1::NodeUnstageVolumeResponse resp;
  grpc::Status s = node->NodeUnstageVolume(&ctx, req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(test::HttpGet(daemon.health_port(), "/status").body.find("vol-stale"), std::string::npos);
  daemon.Stop(SIGTERM);
}

struct Damage {
  const char* name;
  std::function<std::string(const std::string& good)> apply;
  const char* reason;  // in the quarantine's reason
};

void PrintTo(const Damage& p, std::ostream* os) { *os << p.name; }

class DamagedRecordDaemonTest : public HealDaemonTest, public ::testing::WithParamInterface<Damage> {
 protected:
  void TearDown() override {
    if (mounted_) ::umount2(MountPoint().c_str(), MNT_DETACH);
    HealDaemonTest::TearDown();
  }
  std::string MountPoint() const { return dir_ + "/staging/vol-damaged/vol-damaged"; }
  bool Mounted() const {
    std::ifstream in("/proc/self/mountinfo");
    std::string table((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return table.find(" " + MountPoint() + " ") != std::string::npos;
  }
  grpc::Status Unstage(csi::v1::Node::Stub& node, const std::string& id) {
    csi::v1::NodeUnstageVolumeRequest req;
    req.set_volume_id(id);
    req.set_staging_target_path(dir_ + "/staging/" + id);
    grpc::ClientContext ctx;
    csi::v1::NodeUnstageVolumeResponse resp;
    return node.NodeUnstageVolume(&ctx, req, &resp);
  }
  bool mounted_ = false;
};

TEST_P(DamagedRecordDaemonTest, IsNamedAndLeftAloneWhileTheOthersAreHealed) {
  auto boot = ReadBootId();
  ASSERT_TRUE(boot.ok());
  std::string journal_dir = dir_ + "/state/journal";
  std::filesystem::create_directories(dir_ + "/state");
  std::filesystem::create_directories(MountPoint());
  {
    auto journal = NodeJournal::Open(journal_dir);
    ASSERT_TRUE(journal.ok()) << journal.status().ToString();
    ASSERT_TRUE(journal->Put(Record("vol-stale", "00000000-0000-0000-0000-000000000000", dir_ + "/s")).ok());
    ASSERT_TRUE(journal->Put(Record("vol-gone", *boot, dir_ + "/staging/vol-gone")).ok());
    ASSERT_TRUE(journal->Put(Record("vol-damaged", *boot, dir_ + "/staging/vol-damaged")).ok());
  }
  std::string file = journal_dir + "/v.vol-damaged.rec";
  std::ifstream in(file, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  std::ofstream(file, std::ios::binary | std::ios::trunc) << GetParam().apply(bytes);
  // Its staging mount, as the stage left it (a tmpfs stands in for its device).
  mounted_ = ::mount("tmpfs", MountPoint().c_str(), "tmpfs", 0, "size=64k") == 0;

  test::DaemonProcess daemon(NBDKEEPERD_PATH, dir_);
  ASSERT_TRUE(daemon.Start()) << daemon.Log();
  ASSERT_TRUE(daemon.WaitReady(5000)) << daemon.Log();
  std::string log = daemon.Log();
  EXPECT_NE(log.find("event=journal_loaded volumes=2 quarantined=1"), std::string::npos) << log;
  size_t named = log.find("event=journal_record_quarantined");
  ASSERT_NE(named, std::string::npos) << log;
  std::string line = log.substr(named, log.find('\n', named) - named);
  EXPECT_NE(line.find(journal_dir + "/quarantine/v.vol-damaged.rec."), std::string::npos) << line;
  EXPECT_NE(line.find(file + ": " + GetParam().reason), std::string::npos) << line;
  EXPECT_NE(log.find("event=heal_decision volume=vol-stale decision=StaleBoot"), std::string::npos) << log;
  EXPECT_NE(log.find("event=heal_decision volume=vol-gone decision=Expired"), std::string::npos) << log;
  EXPECT_EQ(log.find("volume=vol-damaged"), std::string::npos) << "nothing acts on it: " << log;

  std::string status = test::HttpGet(daemon.health_port(), "/status").body;
  EXPECT_NE(status.find(R"("quarantined_records":[{"file":"v.vol-damaged.rec","moved_to":")" + journal_dir +
                        "/quarantine/v.vol-damaged.rec."),
            std::string::npos)
      << status;
  EXPECT_NE(status.find(GetParam().reason), std::string::npos) << status;
  EXPECT_NE(status.find(R"("volume_id":"vol-gone")"), std::string::npos) << status;
  EXPECT_NE(test::HttpGet(daemon.health_port(), "/metrics").body.find("nbdkeeper_journal_quarantined_records 1"),
            std::string::npos);

  auto node = csi::v1::Node::NewStub(grpc::CreateChannel(daemon.endpoint(), grpc::InsecureChannelCredentials()));
  grpc::Status s = Unstage(*node, "vol-damaged");
  if (mounted_) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
    EXPECT_NE(s.error_message().find(MountPoint() + " mounted"), std::string::npos) << s.error_message();
    EXPECT_NE(s.error_message().find("moved to " + journal_dir + "/quarantine/"), std::string::npos)
        << s.error_message();
    EXPECT_TRUE(Mounted()) << "the daemon unmounted it";
    ASSERT_EQ(::umount2(MountPoint().c_str(), 0), 0);
    mounted_ = false;
    s = Unstage(*node, "vol-damaged");
  }
  EXPECT_TRUE(s.ok()) << "nothing of it left: " << s.error_message();
  daemon.Stop(SIGTERM);
}

INSTANTIATE_TEST_SUITE_P(
    Damages, DamagedRecordDaemonTest,
    ::testing::Values(Damage{"FlippedByte",
                             [](const std::string& g) {
                               std::string d = g;
                               d[kRecordFrameHeaderSize + d.size() / 3] ^= 0x01;  // a payload byte
                               return d;
                             },
                             "checksum mismatch"},
                      Damage{"Truncated", [](const std::string& g) { return g.substr(0, g.size() / 2); },
                             "truncated payload"},
                      Damage{"Empty", [](const std::string&) { return std::string(); }, "empty file (0 bytes)"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace nbdk
