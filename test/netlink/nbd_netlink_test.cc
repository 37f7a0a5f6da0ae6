// NbdNetlink and GenlExchange against this host's real kernel. The host has
// no nbd module, so Open() must fail clearly; the exchange is exercised
// against the always-present "nlctrl" family instead.
#include "netlink/nbd_netlink.h"

#include <gtest/gtest.h>
#include <linux/genetlink.h>
#include <netlink/genl/genl.h>
#include <sys/stat.h>

#include "netlink/genl_socket.h"
#include "test/netlink/genl_test_messages.h"

namespace nbdk {
namespace {

bool NbdModuleLoaded() {
  struct stat st;
  return stat("/sys/module/nbd", &st) == 0;
}

TEST(NbdNetlinkTest, OpenSaysWhenTheNbdModuleIsMissing) {
  EventLoop loop;
  {
    auto nl = NbdNetlink::Open(loop);
    if (NbdModuleLoaded()) {
      // Run where nbd exists (the VM): Open must then work.
      ASSERT_TRUE(nl.ok()) << nl.status().ToString();
      EXPECT_TRUE((*nl)->Status().ok());
    } else {
      ASSERT_FALSE(nl.ok());
      EXPECT_EQ(nl.status().code(), Code::kUnavailable);
      EXPECT_EQ(nl.status().message(), "generic netlink family 'nbd' not found: is the nbd kernel module loaded?");
    }
  }
  EXPECT_TRUE(loop.Shutdown().ok());
}

// CTRL_CMD_GETFAMILY for `name`, asking for an ack, with sequence `seq`.
std::vector<uint8_t> GetFamilyRequest(const char* name, uint32_t seq) {
  NlMsgPtr msg(nlmsg_alloc());
  genlmsg_put(msg.get(), 0, seq, GENL_ID_CTRL, 0, NLM_F_REQUEST | NLM_F_ACK, CTRL_CMD_GETFAMILY, 1);
  nla_put_string(msg.get(), CTRL_ATTR_FAMILY_NAME, name);
  return NlMsgBytes(msg.get());
}

TEST(GenlExchangeTest, ReturnsTheReplyBeforeTheAck) {
  auto sock = ConnectGenlSocket(std::chrono::milliseconds(1000));
  ASSERT_TRUE(sock.ok()) << sock.status().ToString();
  auto replies =
      GenlExchange(sock->get(), GetFamilyRequest("nlctrl", 100), 100, "get nlctrl", std::chrono::milliseconds(2000));
  ASSERT_TRUE(replies.ok()) << replies.status().ToString();
  ASSERT_EQ(replies->size(), 1u);
  nlmsghdr hdr;
  std::memcpy(&hdr, replies->front().data(), sizeof(hdr));
  EXPECT_EQ(hdr.nlmsg_type, GENL_ID_CTRL);
  EXPECT_EQ(hdr.nlmsg_seq, 100u);
}

TEST(GenlExchangeTest, KernelErrorBecomesAStatusNamingTheRequest) {
  auto sock = ConnectGenlSocket(std::chrono::milliseconds(1000));
  ASSERT_TRUE(sock.ok()) << sock.status().ToString();
  auto replies = GenlExchange(sock->get(), GetFamilyRequest("no-such-family", 7), 7, "get family no-such-family",
                              std::chrono::milliseconds(2000));
  ASSERT_FALSE(replies.ok());
  EXPECT_EQ(replies.status().code(), Code::kNotFound);  // the kernel says ENOENT
  EXPECT_EQ(replies.status().message().rfind("get family no-such-family: ", 0), 0u) << replies.status().ToString();
}

TEST(GenlExchangeTest, SkipsAnswersToAnEarlierRequest) {
  auto sock = ConnectGenlSocket(std::chrono::milliseconds(1000));
  ASSERT_TRUE(sock.ok()) << sock.status().ToString();
  // An abandoned request: its error and ack stay queued on the socket.
  auto stale = GetFamilyRequest("no-such-family", 1);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  ASSERT_EQ(sendto(nl_socket_get_fd(sock->get()), stale.data(), stale.size(), 0, reinterpret_cast<sockaddr*>(&kernel),
                   sizeof(kernel)),
            static_cast<ssize_t>(stale.size()));
  auto replies =
      GenlExchange(sock->get(), GetFamilyRequest("nlctrl", 2), 2, "get nlctrl", std::chrono::milliseconds(2000));
  ASSERT_TRUE(replies.ok()) << replies.status().ToString();
  EXPECT_EQ(replies->size(), 1u);
}

TEST(GenlExchangeTest, NoAnswerIsDeadlineExceeded) {
  auto sock = ConnectGenlSocket(std::chrono::milliseconds(50));
  ASSERT_TRUE(sock.ok()) << sock.status().ToString();
  // The kernel answers sequence 3; waiting for sequence 4 sees no answer.
  auto start = std::chrono::steady_clock::now();
  auto replies =
      GenlExchange(sock->get(), GetFamilyRequest("nlctrl", 3), 4, "silent request", std::chrono::milliseconds(200));
  auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(replies.ok());
  EXPECT_EQ(replies.status().code(), Code::kDeadlineExceeded);
  EXPECT_EQ(replies.status().message(), "silent request: no answer from the kernel within 200 ms");
  EXPECT_GE(elapsed, std::chrono::milliseconds(200));
  EXPECT_LT(elapsed, std::chrono::milliseconds(1000));
}

}  // namespace
}  // namespace nbdk
