#include "supervisor/rbd_lock_breaker.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "base/uv_handle.h"
#include "ceph/rados_clients.h"

namespace nbdk {
namespace {

TEST(RbdLockBreakerTest, MissingPoolOrImageIsInvalidArgumentWithoutConnecting) {
  EventLoop loop;
  int connects = 0;
  std::vector<Status> results;
  {
    RadosClients clients(loop, [&](EventLoop&, Lane, const RadosConfig&, RadosCluster::ConnectDone) { ++connects; });
    RbdLockBreaker breaker(loop, clients, 2);
    ImageSpec no_pool;
    no_pool.image = "img";
    ImageSpec no_image;
    no_image.pool = "rbd";
    const CephClient owner{"client.4100", "127.0.0.1:0/11"};
    for (const ImageSpec& spec : {no_pool, no_image}) {
      breaker.ListClients(spec, [&](Result<ImageClients> r) {
        results.push_back(r.status());
        if (results.size() == 4) loop.Stop();
      });
      breaker.BreakLock(spec, owner, [&](Status s) {
        results.push_back(s);
        if (results.size() == 4) loop.Stop();
      });
    }
    EXPECT_TRUE(results.empty()) << "done ran inside the call";
    loop.Run();
  }
  EXPECT_TRUE(loop.Shutdown().ok());
  ASSERT_EQ(results.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(results[i].code(), Code::kInvalidArgument) << i;
    EXPECT_NE(results[i].message().find(i < 2 ? "pool: missing" : "image: missing"), std::string::npos)
        << results[i].ToString();
  }
  EXPECT_EQ(connects, 0);
}

// With the cluster unreachable the breaker reports an error naming the
// image and the monitors after about its timeout, and the loop keeps
// running meanwhile.
TEST(RbdLockBreakerTest, UnreachableClusterFailsInBoundedTimeNamingTheImage) {
  char tmpl[] = "/tmp/nbdk-lock-breaker-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  std::ofstream(dir + "/key") << "AQBz1ZlhAAAAABAAqXR2Y1aU1C3lH7OGvXu+Xw==\n";
  std::ofstream(dir + "/ceph.conf") << "[global]\n";
  ImageSpec spec;
  spec.pool = "rbd";
  spec.rados_namespace = "ns1";
  spec.image = "csi-vol-1";
  spec.monitors = {"127.0.0.1:1"};
  spec.ceph_conf = dir + "/ceph.conf";
  spec.user_id = "nbdk-test";
  spec.keyfile = dir + "/key";

  EventLoop loop;
  std::optional<Status> result;
  int ticks = 0;
  const auto start = std::chrono::steady_clock::now();
  int64_t elapsed_ms = 0;
  {
    RadosClients clients(loop);
    RbdLockBreaker breaker(loop, clients, 2);
    Timer ticker(loop), guard(loop);
    ticker.Start(50, 50, [&] { ++ticks; });
    guard.Start(20000, 0, [&] { loop.Stop(); });
    breaker.ListClients(spec, [&](Result<ImageClients> r) {
      const Status& s = r.status();
      elapsed_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
      result = s;
      loop.Stop();
    });
    loop.Run();
    EXPECT_EQ(clients.size(), 0u);  // a failed connect is not cached
  }
  EXPECT_TRUE(loop.Shutdown().ok());
  unlink((dir + "/key").c_str());
  unlink((dir + "/ceph.conf").c_str());
  rmdir(dir.c_str());

  ASSERT_TRUE(result.has_value()) << "no answer within 20 s";
  ASSERT_FALSE(result->ok());
  EXPECT_NE(result->message().find("rbd/ns1/csi-vol-1"), std::string::npos) << result->ToString();
  EXPECT_NE(result->message().find("127.0.0.1:1"), std::string::npos) << result->ToString();
  EXPECT_LT(elapsed_ms, 6000);
  EXPECT_GE(ticks, 10);
}

}  // namespace
}  // namespace nbdk
