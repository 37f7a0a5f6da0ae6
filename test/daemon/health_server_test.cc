#include "daemon/health_server.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <thread>
#include <vector>

#include "test/common/http_client.h"

namespace nbdk {
namespace {

using test::HttpGet;
using test::RawHttp;

constexpr size_t kBigBody = 32 << 20;  // more than loopback socket buffers hold

// Runs a HealthServer on its own loop thread for the test's duration.
class HealthServerTest : public ::testing::Test {
 protected:
  HealthServerTest() {
    options_.max_request_bytes = 1024;
    options_.idle_timeout_ms = 300;
    options_.write_timeout_ms = 300;
  }
  void SetUp() override {
    std::promise<int> port;
    thread_ = std::thread([this, &port] {
      server_ = std::make_unique<HealthServer>(loop_, options_);
      server_->Route("/ok", [] { return HttpResponse{200, "text/plain", "fine\n"}; });
      server_->Route("/json", [] { return HttpResponse{200, "application/json", "{}"}; });
      server_->Route("/big", [] { return HttpResponse{200, "text/plain", std::string(kBigBody, 'x')}; });
      Status s = server_->Listen({"127.0.0.1", 0});
      port.set_value(s.ok() ? server_->port() : -1);
      loop_.Run();
      server_.reset();
      shutdown_ = loop_.Shutdown();
    });
    port_ = port.get_future().get();
    ASSERT_GT(port_, 0);
  }
  void TearDown() override {
    loop_.Post([this] { loop_.Stop(); });
    thread_.join();
    EXPECT_TRUE(shutdown_.ok()) << shutdown_.ToString();
  }

  HealthServer::Options options_;
  EventLoop loop_;
  std::unique_ptr<HealthServer> server_;
  std::thread thread_;
  int port_ = 0;
  Status shutdown_;
};

TEST_F(HealthServerTest, ServesRoutes) {
  auto r = HttpGet(port_, "/ok");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "fine\n");
  EXPECT_NE(r.headers.find("Content-Length: 5"), std::string::npos);
  EXPECT_NE(r.headers.find("Connection: close"), std::string::npos);
  EXPECT_EQ(HttpGet(port_, "/json?verbose=1").status, 200);
}

TEST_F(HealthServerTest, HeadHasNoBody) {
  auto r = RawHttp(port_, "HEAD /ok HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "");
}

TEST_F(HealthServerTest, UnknownPathIs404) { EXPECT_EQ(HttpGet(port_, "/nope").status, 404); }

TEST_F(HealthServerTest, OtherMethodsAre405) {
  auto r = RawHttp(port_, "POST /ok HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(r.status, 405);
  EXPECT_NE(r.headers.find("Allow: GET, HEAD"), std::string::npos);
  EXPECT_EQ(RawHttp(port_, "DELETE /ok HTTP/1.1\r\nHost: x\r\n\r\n").status, 405);
}

TEST_F(HealthServerTest, MalformedIs400) {
  EXPECT_EQ(RawHttp(port_, "THIS IS NOT HTTP\r\n\r\n").status, 400);
  EXPECT_EQ(RawHttp(port_, "GET /ok HTTP/1.1\r\nBad Header Line\r\n\r\n").status, 400);
}

TEST_F(HealthServerTest, OversizedIs400) {
  std::string big = "GET /ok HTTP/1.1\r\nHost: x\r\nX-Pad: " + std::string(4000, 'a') + "\r\n\r\n";
  auto r = RawHttp(port_, big);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("larger than 1024"), std::string::npos);
}

TEST_F(HealthServerTest, IdleConnectionTimesOut) {
  auto start = std::chrono::steady_clock::now();
  auto r = RawHttp(port_, "GET /ok HTTP/1.1\r\n", 5000);  // never finishes its headers
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.status, 408);
  EXPECT_LT(waited, std::chrono::seconds(4));  // closed by the server, not by our deadline
}

TEST_F(HealthServerTest, ManyConcurrentClients) {
  std::vector<std::future<int>> replies;
  for (int i = 0; i < 64; ++i) {
    replies.push_back(std::async(std::launch::async, [this] { return HttpGet(port_, "/ok").status; }));
  }
  for (auto& f : replies) EXPECT_EQ(f.get(), 200);
}

// Bytes received on `fd` until the peer closes or resets it, or 5 s pass.
size_t DrainUntilClosed(int fd) {
  size_t total = 0;
  char buf[65536];
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5); std::chrono::steady_clock::now() < end;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    total += static_cast<size_t>(n);
  }
  return total;
}

TEST_F(HealthServerTest, ClientThatNeverReadsIsCutOffAtTheWriteDeadline) {
  int fd = test::OpenTcp(port_, 4096);
  ASSERT_GE(fd, 0);
  std::string request = "GET /big HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // 5x the write deadline, reading nothing
  size_t received = DrainUntilClosed(fd);
  ::close(fd);
  EXPECT_LT(received, kBigBody) << "the server kept the response waiting for a client that does not read";
  EXPECT_EQ(HttpGet(port_, "/ok").status, 200);
}

// Few slots, and idle connections that would hold them for 10 s.
class HealthServerFullTest : public HealthServerTest {
 protected:
  HealthServerFullTest() {
    options_.max_connections = 4;
    options_.idle_timeout_ms = 10000;
  }
};

TEST_F(HealthServerFullTest, ProbesAreAnsweredWhenEverySlotIsTaken) {
  std::vector<int> idle;
  for (size_t i = 0; i < options_.max_connections; ++i) {
    idle.push_back(test::OpenTcp(port_));
    ASSERT_GE(idle.back(), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // accepted in this order
  }
  for (int round = 0; round < 3; ++round) {
    auto r = HttpGet(port_, "/ok");
    EXPECT_EQ(r.status, 200) << "round " << round << ": " << r.raw;
  }
  // The oldest waiting connections made room; the newest is still open.
  char byte;
  EXPECT_EQ(::recv(idle.front(), &byte, 1, 0), 0) << "the oldest idle connection is closed";
  pollfd p{idle.back(), POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 50), 0) << "the newest idle connection is untouched";
  for (int fd : idle) ::close(fd);
}

TEST(HttpResponseTest, Serializes) {
  EXPECT_EQ(SerializeHttpResponse({503, "text/plain", "no\n"}, false),
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n"
            "Connection: close\r\n\r\nno\n");
}

TEST(HealthServerListenTest, BadAddressIsNamed) {
  EventLoop loop;
  HealthServer server(loop, {});
  Status s = server.Listen({"not-an-ip", 1});
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("not-an-ip"), std::string::npos);
  server.Close();
  EXPECT_TRUE(loop.Shutdown().ok());
}

}  // namespace
}  // namespace nbdk
