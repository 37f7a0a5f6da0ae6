// /status over TCP from the real HealthServer and status pages, with a
// mapping whose rbd-nbd (the fake) wrote to stderr: its raw output is not
// published unless the daemon is configured to show it. And the volumes
// array for staged volumes without a mapping: one journaled in this boot is
// Unmapped on its device, one from the boot before is StaleBoot.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <optional>

#include "daemon/config.h"
#include "daemon/status_page.h"
#include "daemon/volume_report.h"
#include "test/common/http_client.h"

namespace nbdk {
namespace {

class NoLockBreaks final : public LockBreaker {
 public:
  void ListClients(const ImageSpec&, std::function<void(Result<ImageClients>)> done) override { done(ImageClients{}); }
  void BreakLock(const ImageSpec&, const CephClient&, std::function<void(Status)> done) override { done(Status::Ok()); }
};

constexpr char kBoot[] = "1b5e4f3c-9a7d-4d4e-8b1f-2c3d4e5f6a7b";

class StatusOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nbdk-status-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::filesystem::create_directories(dir_ + "/fake");
    std::ofstream(dir_ + "/fake/img1.map") << "device=/dev/nbd1 stderr=RAW_RBD_NBD_OUTPUT\n";
    SupervisorConfig sc;
    sc.rbd_nbd_path = FAKE_RBD_NBD_PATH;
    sc.state_dir = dir_ + "/state";
    sc.sysfs_root = dir_ + "/sys";
    sc.child_env = {"FAKE_RBD_NBD_DIR=" + dir_ + "/fake", "FAKE_RBD_NBD_SYSFS=" + dir_ + "/sys", "PATH=/usr/bin:/bin"};
    supervisor_.emplace(loop_, sc, breaker_);
    auto journal = NodeJournal::Open(dir_ + "/journal");
    ASSERT_TRUE(journal.ok()) << journal.status().ToString();
    volumes_.emplace(loop_, std::move(*journal));
  }
  void TearDown() override {
    supervisor_.reset();
    volumes_.reset();
    EXPECT_TRUE(loop_.Shutdown().ok());
    std::filesystem::remove_all(dir_);
  }

  // Maps vol1 with the fake, then GETs /status with the daemon's setting.
  std::string StatusBody(bool show_output) {
    MapRequest req;
    req.volume_id = "vol1";
    req.image.pool = "rbd";
    req.image.image = "img1";
    req.image.monitors = {"10.0.0.1:6789"};
    req.image.user_id = "csi";
    req.image.keyfile = "/etc/ceph/csi.key";
    std::optional<Result<std::string>> mapped;
    supervisor_->Map(req, [&](Result<std::string> r) { mapped = std::move(r); });
    RunUntil([&] { return mapped.has_value() && !supervisor_->Snapshot("vol1")->output_tail.empty(); });
    EXPECT_TRUE(mapped && mapped->ok());

    Config config;
    Metrics metrics;
    DaemonView view{&config, &metrics, std::chrono::steady_clock::now(), [] { return true; }, nullptr, nullptr};
    view.write_volumes = [&](rapidjson::Writer<rapidjson::StringBuffer>& w) {
      WriteVolumesJson(*volumes_, *supervisor_, links_, kBoot, show_output, w);
    };
    HealthServer server(loop_, {});
    InstallStatusPages(server, metrics, view);
    EXPECT_TRUE(server.Listen({"127.0.0.1", 0}).ok());
    auto reply = std::async(std::launch::async, [port = server.port()] { return test::HttpGet(port, "/status"); });
    RunUntil([&] { return reply.wait_for(std::chrono::seconds(0)) == std::future_status::ready; });
    server.Close();
    std::optional<Status> unmapped;
    supervisor_->Unmap("vol1", [&](Status s) { unmapped = s; });
    RunUntil([&] { return unmapped.has_value(); });
    auto r = reply.get();
    EXPECT_EQ(r.status, 200);
    return r.body;
  }

  // Journals a staged volume `id` (of image `id`, or of its snapshot
  // `snap`) on `device` under `boot_id`.
  void Stage(const std::string& id, const std::string& device, const std::string& boot_id,
             const std::string& snap = "") {
    VolumeRecord r;
    r.volume_id = id;
    r.cluster_id = "test";
    r.pool = "rbd";
    r.image = id;
    r.snap = snap;
    r.read_only = !snap.empty();
    r.user_id = "csi";
    r.keyfile_path = dir_ + "/no-key";
    r.nbd_device = device;
    r.cookie = id;
    r.fs_type = "ext4";
    r.staging_path = dir_ + "/staging/" + id;
    r.rbd_nbd_pid = 4242;
    r.boot_id = boot_id;
    r.state = VolumeState::kStaged;
    std::optional<Status> put;
    volumes_->Put(r, [&](Status s) { put = s; });
    RunUntil([&] { return put.has_value(); });
    ASSERT_TRUE(put && put->ok());
  }

  // The "volumes" array as WriteVolumesJson writes it in boot kBoot.
  rapidjson::Document Volumes() {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    WriteVolumesJson(*volumes_, *supervisor_, links_, kBoot, false, w);
    rapidjson::Document doc;
    doc.Parse(buf.GetString(), buf.GetSize());
    EXPECT_TRUE(doc.IsArray()) << buf.GetString();
    return doc;
  }

  void RunUntil(const std::function<bool()>& done) {
    Timer poll(loop_);
    poll.Start(5, 5, [&] {
      if (done()) loop_.Stop();
    });
    Timer limit(loop_);
    limit.Start(10000, 0, [&] { loop_.Stop(); });
    if (!done()) loop_.Run();
  }

  std::string dir_;
  EventLoop loop_;
  NoLockBreaks breaker_;
  DeviceLinks links_{loop_, ""};  // none kept: /status shows no "link"
  std::optional<Supervisor> supervisor_;
  std::optional<StagedVolumes> volumes_;
};

TEST_F(StatusOutputTest, RawOutputIsNotPublishedByDefault) {
  EXPECT_FALSE(Config{}.status_shows_output);
  std::string body = StatusBody(Config{}.status_shows_output);
  EXPECT_NE(body.find("\"volume_id\":\"vol1\""), std::string::npos) << body;
  EXPECT_EQ(body.find("RAW RBD NBD OUTPUT"), std::string::npos) << body;
  EXPECT_EQ(body.find("output_tail"), std::string::npos) << body;
  // No ChildScopes given: the child stays in our cgroup, and says why.
  EXPECT_NE(body.find(R"("cgroup_mode":"daemon","cgroup_reason":"child scopes are off")"), std::string::npos) << body;
}

TEST_F(StatusOutputTest, RawOutputIsShownWhenConfigured) {
  std::string body = StatusBody(true);
  EXPECT_NE(body.find("RAW RBD NBD OUTPUT"), std::string::npos) << body;
}

TEST_F(StatusOutputTest, AVolumeStagedBeforeTheRebootIsStaleBootWithoutADevice) {
  Stage("vol-now", "/dev/nbd2", kBoot);
  Stage("vol-old", "/dev/nbd3", "00000000-0000-0000-0000-000000000000");
  rapidjson::Document volumes = Volumes();
  ASSERT_TRUE(volumes.IsArray());
  ASSERT_EQ(volumes.Size(), 2u);
  auto str = [](const rapidjson::Value& v, const char* key) {
    auto it = v.FindMember(key);
    return it != v.MemberEnd() && it->value.IsString() ? std::string(it->value.GetString()) : std::string("<absent>");
  };
  const rapidjson::Value& now = volumes[0];
  const rapidjson::Value& old = volumes[1];
  ASSERT_EQ(str(now, "volume_id"), "vol-now");
  EXPECT_EQ(str(now, "state"), "Unmapped");
  EXPECT_EQ(str(now, "device"), "/dev/nbd2");
  EXPECT_EQ(str(now, "previous_device"), "<absent>");

  ASSERT_EQ(str(old, "volume_id"), "vol-old");
  EXPECT_EQ(str(old, "state"), "StaleBoot");
  EXPECT_EQ(str(old, "journal_state"), "staged");
  EXPECT_EQ(str(old, "device"), "") << "that /dev/nbd3 is another boot's and may serve another volume now";
  EXPECT_EQ(str(old, "previous_device"), "/dev/nbd3");
  std::string reason = str(old, "reason");
  EXPECT_NE(reason.find("rebooted"), std::string::npos) << reason;
  EXPECT_NE(reason.find("unstage it or stage it again"), std::string::npos) << reason;
}

// /status (and the health JSON it is) names a snapshot's volume's
// snapshot beside its image, from the journal and from a mapping alike;
// an image's volume has no "snap".
TEST_F(StatusOutputTest, ASnapshotsVolumeNamesTheSnapshotBesideItsImage) {
  Stage("vol-head", "/dev/nbd2", kBoot);
  Stage("vol-snap", "/dev/nbd3", kBoot, "monday");
  std::ofstream(dir_ + "/fake/img1@tuesday.map") << "device=/dev/nbd4\n";
  MapRequest req;
  req.volume_id = "vol-map";
  req.image = {"rbd", "", "img1", {}, "", "csi", "/etc/ceph/csi.key", "tuesday"};
  req.read_only = true;
  std::optional<Result<std::string>> mapped;
  supervisor_->Map(req, [&](Result<std::string> r) { mapped = std::move(r); });
  RunUntil([&] { return mapped.has_value(); });
  ASSERT_TRUE(mapped && mapped->ok());

  rapidjson::Document volumes = Volumes();
  ASSERT_EQ(volumes.Size(), 3u);
  std::map<std::string, std::pair<std::string, std::string>> seen;  // volume -> image, snap
  for (const auto& v : volumes.GetArray()) {
    seen[v["volume_id"].GetString()] = {v["image"].GetString(), v.HasMember("snap") ? v["snap"].GetString() : "-"};
  }
  EXPECT_EQ(seen["vol-head"], std::make_pair(std::string("rbd/vol-head"), std::string("-")));
  EXPECT_EQ(seen["vol-snap"], std::make_pair(std::string("rbd/vol-snap"), std::string("monday")));
  EXPECT_EQ(seen["vol-map"], std::make_pair(std::string("rbd/img1"), std::string("tuesday")));
  std::optional<Status> unmapped;
  supervisor_->Unmap("vol-map", [&](Status s) { unmapped = s; });
  RunUntil([&] { return unmapped.has_value(); });
}

}  // namespace
}  // namespace nbdk
