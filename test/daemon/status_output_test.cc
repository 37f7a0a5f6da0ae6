// /status over TCP from the real HealthServer and status pages, with a
// mapping whose rbd-nbd (the fake) wrote to stderr: its raw output is not
// published unless the daemon is configured to show it.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <optional>

#include "daemon/config.h"
#include "daemon/status_page.h"
#include "daemon/volume_report.h"
#include "test/common/http_client.h"

namespace nbdk {
namespace {

class NoLockBreaks final : public LockBreaker {
 public:
  void BreakDeadOwnerLock(const ImageSpec&, std::function<void()> owner_seen,
                          std::function<void(Status)> done) override {
    owner_seen();
    done(Status::Ok());
  }
};

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
    sc.child_env = {"FAKE_RBD_NBD_DIR=" + dir_ + "/fake", "PATH=/usr/bin:/bin"};
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
    DaemonView view{&config, &metrics, std::chrono::steady_clock::now(), [] { return true; }, nullptr};
    view.write_volumes = [&](rapidjson::Writer<rapidjson::StringBuffer>& w) {
      WriteVolumesJson(*volumes_, *supervisor_, show_output, w);
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
  std::optional<Supervisor> supervisor_;
  std::optional<StagedVolumes> volumes_;
};

TEST_F(StatusOutputTest, RawOutputIsNotPublishedByDefault) {
  EXPECT_FALSE(Config{}.status_shows_output);
  std::string body = StatusBody(Config{}.status_shows_output);
  EXPECT_NE(body.find("\"volume_id\":\"vol1\""), std::string::npos) << body;
  EXPECT_EQ(body.find("RAW RBD NBD OUTPUT"), std::string::npos) << body;
  EXPECT_EQ(body.find("output_tail"), std::string::npos) << body;
}

TEST_F(StatusOutputTest, RawOutputIsShownWhenConfigured) {
  std::string body = StatusBody(true);
  EXPECT_NE(body.find("RAW RBD NBD OUTPUT"), std::string::npos) << body;
}

}  // namespace
}  // namespace nbdk
