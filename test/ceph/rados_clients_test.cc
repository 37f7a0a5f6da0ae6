#include "ceph/rados_clients.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <deque>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/event_loop.h"

namespace nbdk {
namespace {

using ClusterPtr = std::shared_ptr<RadosCluster>;

// A connector that never touches the network: it answers on the next loop
// turn with an unconnected handle, or with the next queued failure.
struct FakeConnector {
  int calls = 0;
  std::vector<Lane> lanes;      // the lane of each call
  std::deque<Status> failures;  // consumed one per call before succeeding

  RadosClients::Connector Get() {
    return [this](EventLoop& loop, Lane lane, const RadosConfig& config, RadosCluster::ConnectDone done) {
      ++calls;
      lanes.push_back(lane);
      std::optional<Status> failure;
      if (!failures.empty()) {
        failure = failures.front();
        failures.pop_front();
      }
      loop.Post([config, done, failure] {
        if (failure) {
          done(*failure);
          return;
        }
        rados_t raw = nullptr;
        std::string name = "client." + config.user_id;
        int rc = rados_create2(&raw, "ceph", name.c_str(), 0);
        ASSERT_EQ(rc, 0);
        done(std::make_shared<RadosCluster>(RadosHandle(raw), config.Describe()));
      });
    };
  }
};

class RadosClientsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nbdk-rados-clients-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    WriteKey("key", "AQBz1ZlhAAAAABAAqXR2Y1aU1C3lH7OGvXu+Xw==");
  }
  void TearDown() override {
    EXPECT_TRUE(loop_.Shutdown().ok());
    for (const auto& f : files_) unlink(f.c_str());
    rmdir(dir_.c_str());
  }
  std::string WriteKey(const std::string& name, const std::string& key) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << key << "\n";
    files_.push_back(path);
    return path;
  }
  RadosConfig ConfigFor(std::string user, std::string keyfile = "") const {
    RadosConfig c;
    c.monitors = {"10.0.0.1:6789", "10.0.0.2:6789"};
    c.user_id = std::move(user);
    c.keyfile = keyfile.empty() ? dir_ + "/key" : keyfile;
    return c;
  }
  // Get() and run the loop until its callback ran; the result.
  Result<ClusterPtr> GetNow(RadosClients& clients, const RadosConfig& config) {
    std::optional<Result<ClusterPtr>> out;
    clients.Get(config, [&](Result<ClusterPtr> r) {
      out.emplace(std::move(r));
      loop_.Stop();
    });
    EXPECT_FALSE(out.has_value()) << "done ran inside Get()";
    loop_.Run();
    if (!out) return Status::Internal("Get() never completed");
    return std::move(*out);
  }

  EventLoop loop_;
  FakeConnector fake_;
  std::string dir_;
  std::vector<std::string> files_;
};

TEST_F(RadosClientsTest, SameKeyReturnsTheSameConnection) {
  RadosClients clients(loop_, fake_.Get());
  Result<ClusterPtr> a = GetNow(clients, ConfigFor("csi"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  RadosConfig reordered = ConfigFor("csi");
  std::swap(reordered.monitors[0], reordered.monitors[1]);
  Result<ClusterPtr> b = GetNow(clients, reordered);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a.value().get(), b.value().get());
  EXPECT_EQ(fake_.calls, 1);
  EXPECT_EQ(clients.size(), 1u);
}

// The Controller's cache connects on the Controller's lane, the Node's on
// libuv's pool.
TEST_F(RadosClientsTest, ConnectsOnItsLane) {
  RadosClients node(loop_, fake_.Get());
  RadosClients controller(loop_, fake_.Get(), Lane::kController);
  ASSERT_TRUE(GetNow(node, ConfigFor("csi")).ok());
  ASSERT_TRUE(GetNow(controller, ConfigFor("csi")).ok());
  EXPECT_EQ(fake_.lanes, (std::vector<Lane>{Lane::kShared, Lane::kController}));
}

TEST_F(RadosClientsTest, ConcurrentGetsShareOneConnect) {
  RadosClients clients(loop_, fake_.Get());
  std::vector<ClusterPtr> got;
  for (int i = 0; i < 3; ++i) {
    clients.Get(ConfigFor("csi"), [&](Result<ClusterPtr> r) {
      ASSERT_TRUE(r.ok());
      got.push_back(r.value());
      if (got.size() == 3) loop_.Stop();
    });
  }
  loop_.Run();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].get(), got[1].get());
  EXPECT_EQ(got[0].get(), got[2].get());
  EXPECT_EQ(fake_.calls, 1);
}

TEST_F(RadosClientsTest, DifferentUsersGetDifferentConnections) {
  RadosClients clients(loop_, fake_.Get());
  Result<ClusterPtr> a = GetNow(clients, ConfigFor("csi"));
  Result<ClusterPtr> b = GetNow(clients, ConfigFor("admin"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a.value().get(), b.value().get());
  EXPECT_EQ(fake_.calls, 2);
  EXPECT_EQ(clients.size(), 2u);
}

TEST_F(RadosClientsTest, BrokenConnectionIsReplaced) {
  RadosClients clients(loop_, fake_.Get());
  Result<ClusterPtr> a = GetNow(clients, ConfigFor("csi"));
  ASSERT_TRUE(a.ok());
  a.value()->NoteResult(-ENOENT);  // an ordinary error keeps the connection
  Result<ClusterPtr> same = GetNow(clients, ConfigFor("csi"));
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same.value().get(), a.value().get());

  a.value()->NoteResult(-ESHUTDOWN);  // blocklisted
  Result<ClusterPtr> b = GetNow(clients, ConfigFor("csi"));
  ASSERT_TRUE(b.ok());
  EXPECT_NE(b.value().get(), a.value().get());
  EXPECT_FALSE(b.value()->broken());
  EXPECT_EQ(fake_.calls, 2);
  EXPECT_EQ(clients.size(), 1u);
}

TEST_F(RadosClientsTest, FailedConnectIsNotCached) {
  fake_.failures.push_back(Status::DeadlineExceeded("connect to monitors 10.0.0.1:6789: timed out"));
  RadosClients clients(loop_, fake_.Get());
  Result<ClusterPtr> a = GetNow(clients, ConfigFor("csi"));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Code::kDeadlineExceeded);
  EXPECT_EQ(clients.size(), 0u);
  Result<ClusterPtr> b = GetNow(clients, ConfigFor("csi"));
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(fake_.calls, 2);
}

TEST_F(RadosClientsTest, SameKeyAtAnotherPathSharesTheConnection) {
  RadosClients clients(loop_, fake_.Get());
  Result<ClusterPtr> a = GetNow(clients, ConfigFor("csi"));
  std::string copy = WriteKey("copy", "  AQBz1ZlhAAAAABAAqXR2Y1aU1C3lH7OGvXu+Xw==  ");
  Result<ClusterPtr> b = GetNow(clients, ConfigFor("csi", copy));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.value().get(), b.value().get());
  EXPECT_EQ(fake_.calls, 1);
}

TEST_F(RadosClientsTest, WrongKeyNeverBorrowsTheCachedConnection) {
  RadosClients clients(loop_, fake_.Get());
  Result<ClusterPtr> good = GetNow(clients, ConfigFor("csi"));
  ASSERT_TRUE(good.ok());
  fake_.failures.push_back(Status::FailedPrecondition("authentication failed"));
  std::string wrong = WriteKey("wrong", "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==");
  Result<ClusterPtr> bad = GetNow(clients, ConfigFor("csi", wrong));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(fake_.calls, 2);
  // The failed attempt left the good connection alone.
  Result<ClusterPtr> again = GetNow(clients, ConfigFor("csi"));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.value().get(), good.value().get());
  EXPECT_EQ(clients.size(), 1u);
}

TEST_F(RadosClientsTest, NewKeyReplacesTheOldKeysConnection) {
  RadosClients clients(loop_, fake_.Get());
  Result<ClusterPtr> old_key = GetNow(clients, ConfigFor("csi"));
  std::string rotated = WriteKey("rotated", "AQCRotatedKeyRotatedKeyRotatedKeyRotat==");
  Result<ClusterPtr> new_key = GetNow(clients, ConfigFor("csi", rotated));
  ASSERT_TRUE(old_key.ok() && new_key.ok());
  EXPECT_NE(old_key.value().get(), new_key.value().get());
  EXPECT_EQ(clients.size(), 1u);
}

TEST_F(RadosClientsTest, UnreadableKeyfileFailsWithoutConnecting) {
  RadosClients clients(loop_, fake_.Get());
  RadosConfig c = ConfigFor("csi", dir_ + "/absent");
  Result<ClusterPtr> r = GetNow(clients, c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_NE(r.status().message().find("keyfile " + c.keyfile), std::string::npos) << r.status().ToString();
  EXPECT_EQ(fake_.calls, 0);
}

TEST_F(RadosClientsTest, DestroyedWhileConnectingNeverCallsBack) {
  RadosCluster::ConnectDone pending;
  auto holding_connector = [&](EventLoop&, Lane, const RadosConfig&, RadosCluster::ConnectDone done) {
    pending = std::move(done);
    loop_.Stop();
  };
  bool called = false;
  {
    RadosClients clients(loop_, holding_connector);
    clients.Get(ConfigFor("csi"), [&](Result<ClusterPtr>) { called = true; });
    loop_.Run();  // until the connect starts
    ASSERT_TRUE(pending != nullptr);
  }
  pending(Status::DeadlineExceeded("the cluster answered too late"));
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace nbdk
