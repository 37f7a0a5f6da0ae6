#include "ceph/rados_cluster.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "base/event_loop.h"
#include "base/uv_handle.h"

namespace nbdk {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kKeyText = "AQBz1ZlhAAAAABAAqXR2Y1aU1C3lH7OGvXu+Xw==";

class RadosClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nbdk-rados-cluster-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::ofstream(dir_ + "/key") << kKeyText << "\n";
    // An empty ceph.conf keeps the host's /etc/ceph out of the test.
    std::ofstream(dir_ + "/ceph.conf") << "[global]\n";
  }
  void TearDown() override {
    unlink((dir_ + "/key").c_str());
    unlink((dir_ + "/ceph.conf").c_str());
    rmdir(dir_.c_str());
  }
  RadosConfig ClosedPortConfig() const {
    RadosConfig c;
    c.ceph_conf = dir_ + "/ceph.conf";
    c.monitors = {"127.0.0.1:1"};  // nothing listens on port 1
    c.user_id = "nbdk-test";
    c.keyfile = dir_ + "/key";
    c.timeout_s = 2;
    return c;
  }

  // Runs Connect on a fresh loop with a 50 ms ticker; returns the result,
  // how long it took and how often the ticker fired meanwhile.
  struct Outcome {
    std::optional<Result<std::shared_ptr<RadosCluster>>> result;
    int64_t elapsed_ms = 0;
    int ticks = 0;
  };
  static Outcome ConnectOnLoop(const RadosConfig& config) {
    Outcome out;
    EventLoop loop;
    {
      Timer ticker(loop), guard(loop);
      ticker.Start(50, 50, [&] { ++out.ticks; });
      guard.Start(20000, 0, [&] { loop.Stop(); });  // a hung connect fails the test, not CI
      const Clock::time_point start = Clock::now();
      RadosCluster::Connect(loop, Lane::kShared, config, [&](Result<std::shared_ptr<RadosCluster>> r) {
        out.elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
        out.result.emplace(std::move(r));
        loop.Stop();
      });
      loop.Run();
    }
    EXPECT_TRUE(loop.Shutdown().ok());
    return out;
  }

  std::string dir_;
};

TEST_F(RadosClusterTest, ClosedMonitorPortFailsWithinTimeoutWithoutBlockingTheLoop) {
  Outcome out = ConnectOnLoop(ClosedPortConfig());
  ASSERT_TRUE(out.result.has_value()) << "connect did not finish within 20 s";
  ASSERT_FALSE(out.result->ok());
  const Status& s = out.result->status();
  EXPECT_TRUE(s.code() == Code::kDeadlineExceeded || s.code() == Code::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("127.0.0.1:1"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("client.nbdk-test"), std::string::npos) << s.ToString();
  EXPECT_EQ(s.message().find(kKeyText), std::string::npos) << "the key leaked into: " << s.ToString();
  // Bounded by timeout_s (2 s), with slack for a loaded 2-core machine.
  EXPECT_LT(out.elapsed_ms, 6000);
  // The loop kept turning: a 50 ms ticker fired most of the time.
  EXPECT_GE(out.ticks, static_cast<int>(out.elapsed_ms / 50 / 2)) << out.elapsed_ms << " ms";
  EXPECT_GE(out.ticks, 10);
}

TEST_F(RadosClusterTest, InvalidConfigFailsFastNamingTheField) {
  RadosConfig c = ClosedPortConfig();
  c.keyfile = dir_ + "/absent-key";
  Outcome out = ConnectOnLoop(c);
  ASSERT_TRUE(out.result.has_value());
  ASSERT_FALSE(out.result->ok());
  EXPECT_EQ(out.result->status().code(), Code::kNotFound);
  EXPECT_NE(out.result->status().message().find("keyfile"), std::string::npos);
  EXPECT_LT(out.elapsed_ms, 1000);
}

TEST_F(RadosClusterTest, UnparsableCephConfIsNamed) {
  RadosConfig c = ClosedPortConfig();
  std::ofstream(c.ceph_conf) << "[global\nmon_host = \n";
  Result<std::shared_ptr<RadosCluster>> r = RadosCluster::ConnectBlocking(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ceph_conf " + c.ceph_conf), std::string::npos) << r.status().ToString();
}

TEST_F(RadosClusterTest, GarbageKeyIsInvalidArgumentNamingTheKeyfile) {
  RadosConfig c = ClosedPortConfig();
  std::ofstream(c.keyfile, std::ios::trunc) << "not-a-key\n";
  Result<std::shared_ptr<RadosCluster>> r = RadosCluster::ConnectBlocking(c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << r.status().ToString();
  EXPECT_NE(r.status().message().find("keyfile " + c.keyfile), std::string::npos) << r.status().ToString();
  EXPECT_EQ(r.status().message().find("not-a-key"), std::string::npos) << r.status().ToString();
}

TEST_F(RadosClusterTest, UnparsableMonitorIsInvalidArgumentNamingIt) {
  RadosConfig c = ClosedPortConfig();
  c.monitors = {"127.0.0.1:notaport"};
  Result<std::shared_ptr<RadosCluster>> r = RadosCluster::ConnectBlocking(c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << r.status().ToString();
  EXPECT_NE(r.status().message().find("127.0.0.1:notaport"), std::string::npos) << r.status().ToString();
}

TEST(RadosClusterNoteResultTest, OnlyConnectionErrorsMarkBroken) {
  rados_t raw = nullptr;
  ASSERT_EQ(rados_create2(&raw, "ceph", "client.nbdk-test", 0), 0);
  RadosCluster cluster(RadosHandle(raw), "test cluster");
  EXPECT_EQ(cluster.NoteResult(-ENOENT), -ENOENT);
  EXPECT_EQ(cluster.NoteResult(0), 0);
  EXPECT_FALSE(cluster.broken());
  EXPECT_EQ(cluster.NoteResult(-ESHUTDOWN), -ESHUTDOWN);
  EXPECT_TRUE(cluster.broken());
}

}  // namespace
}  // namespace nbdk
