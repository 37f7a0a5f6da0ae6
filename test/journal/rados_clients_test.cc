#include "journal/rados_clients.h"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "daemon/event_loop.h"

namespace nbdk {
namespace {

using ClusterPtr = std::shared_ptr<RadosCluster>;

// A connector that never touches the network: it answers on the next loop
// turn with an unconnected handle, or with the next queued failure.
struct FakeConnector {
  int calls = 0;
  std::deque<Status> failures;  // consumed one per call before succeeding

  RadosClients::Connector Get() {
    return [this](EventLoop& loop, const RadosConfig& config, RadosCluster::ConnectDone done) {
      ++calls;
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

RadosConfig ConfigFor(std::string user) {
  RadosConfig c;
  c.monitors = {"10.0.0.1:6789", "10.0.0.2:6789"};
  c.user_id = std::move(user);
  c.keyfile = "/nonexistent/never-read-by-the-fake";
  return c;
}

class RadosClientsTest : public ::testing::Test {
 protected:
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
  void TearDown() override { EXPECT_TRUE(loop_.Shutdown().ok()); }

  EventLoop loop_;
  FakeConnector fake_;
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

TEST_F(RadosClientsTest, DestroyedWhileConnectingNeverCallsBack) {
  bool called = false;
  {
    RadosClients clients(loop_, fake_.Get());
    clients.Get(ConfigFor("csi"), [&](Result<ClusterPtr>) { called = true; });
  }
  bool drained = false;
  loop_.Post([&] {
    drained = true;
    loop_.Stop();
  });
  loop_.Run();
  EXPECT_TRUE(drained);
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace nbdk
