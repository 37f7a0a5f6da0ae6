// BuildResizeRequest: the NBD_CMD_RECONFIGURE that grows a device, checked
// byte by byte and by libnl's parser (an implementation independent of ours)
// with the kernel's attribute types.
#include <gtest/gtest.h>
#include <linux/nbd-netlink.h>
#include <netlink/genl/genl.h>

#include <cstring>
#include <string>

#include "netlink/nbd_genl_message.h"
#include "test/netlink/genl_test_messages.h"

namespace nbdk {
namespace {

using testing::kNbdFamily;

struct ParsedResize {
  nlmsghdr hdr{};
  uint8_t cmd = 0;
  std::optional<uint32_t> index;
  std::optional<uint64_t> size;
  std::optional<std::string> backend;
};

// Parses with the kernel's policy for these attributes (nbd_attr_policy:
// INDEX u32, SIZE_BYTES u64, BACKEND_IDENTIFIER string).
ParsedResize ParseWithLibnl(std::vector<uint8_t> bytes) {
  auto* hdr = reinterpret_cast<nlmsghdr*>(bytes.data());
  EXPECT_EQ(hdr->nlmsg_len, bytes.size());
  nlattr* attrs[NBD_ATTR_MAX + 1];
  nla_policy policy[NBD_ATTR_MAX + 1] = {};
  policy[NBD_ATTR_INDEX].type = NLA_U32;
  policy[NBD_ATTR_SIZE_BYTES].type = NLA_U64;
  policy[NBD_ATTR_BACKEND_IDENTIFIER].type = NLA_STRING;
  int err = genlmsg_parse(hdr, 0, attrs, NBD_ATTR_MAX, policy);
  EXPECT_EQ(err, 0);
  ParsedResize out;
  out.hdr = *hdr;
  out.cmd = static_cast<genlmsghdr*>(nlmsg_data(hdr))->cmd;
  if (err != 0) return out;
  if (attrs[NBD_ATTR_INDEX]) out.index = nla_get_u32(attrs[NBD_ATTR_INDEX]);
  if (attrs[NBD_ATTR_SIZE_BYTES]) out.size = nla_get_u64(attrs[NBD_ATTR_SIZE_BYTES]);
  if (attrs[NBD_ATTR_BACKEND_IDENTIFIER]) out.backend = nla_get_string(attrs[NBD_ATTR_BACKEND_IDENTIFIER]);
  return out;
}

std::vector<uint8_t> Build(uint32_t index, uint64_t size, std::string_view backend) {
  auto bytes = BuildResizeRequest(kNbdFamily, 9, index, size, backend);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return bytes.ok() ? *bytes : std::vector<uint8_t>();
}

TEST(BuildResizeRequestTest, ReconfigureWithIndexSizeAndBackend) {
  const uint64_t size = 5ull << 32;  // above 4 GiB: all 8 bytes matter
  auto p = ParseWithLibnl(Build(3, size, "0001-0004-test-0000000000000002-5b1c"));
  EXPECT_EQ(p.hdr.nlmsg_type, kNbdFamily);
  EXPECT_EQ(p.hdr.nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  EXPECT_EQ(p.hdr.nlmsg_seq, 9u);
  EXPECT_EQ(p.cmd, NBD_CMD_RECONFIGURE);
  EXPECT_EQ(p.index, std::optional<uint32_t>(3));
  EXPECT_EQ(p.size, std::optional<uint64_t>(size));
  EXPECT_EQ(p.backend, std::optional<std::string>("0001-0004-test-0000000000000002-5b1c"));
}

TEST(BuildResizeRequestTest, ExactLayout) {
  // headers 20 | INDEX 4+4 | SIZE_BYTES 4+8 | BACKEND 4 + "abcde\0" + 2 pad
  auto bytes = Build(1, 4096, "abcde");
  ASSERT_EQ(bytes.size(), 20u + 8 + 12 + 12);
  auto attr_at = [&](size_t offset) {
    nlattr a;
    std::memcpy(&a, bytes.data() + offset, sizeof(a));
    return a;
  };
  EXPECT_EQ(attr_at(20).nla_type, NBD_ATTR_INDEX);
  EXPECT_EQ(attr_at(28).nla_type, NBD_ATTR_SIZE_BYTES);
  EXPECT_EQ(attr_at(28).nla_len, 12);
  uint64_t size = 0;
  std::memcpy(&size, bytes.data() + 32, sizeof(size));
  EXPECT_EQ(size, 4096u);
  EXPECT_EQ(attr_at(40).nla_type, NBD_ATTR_BACKEND_IDENTIFIER);
  EXPECT_EQ(attr_at(40).nla_len, 4 + 6);  // the kernel's nla_strcmp drops the NUL
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data() + 44), 6), std::string("abcde\0", 6));
  EXPECT_EQ(bytes[50], 0);
  EXPECT_EQ(bytes[51], 0);
}

TEST(BuildResizeRequestTest, BackendLengthsAroundTheAlignment) {
  for (size_t n = 1; n <= 9; ++n) {
    std::string backend(n, 'x');
    auto bytes = Build(0, 1 << 20, backend);
    EXPECT_EQ(bytes.size() % NLA_ALIGNTO, 0u) << n;
    auto p = ParseWithLibnl(bytes);
    EXPECT_EQ(p.backend, std::optional<std::string>(backend)) << n;
  }
}

TEST(BuildResizeRequestTest, EmptyBackendLeavesTheAttributeOut) {
  auto bytes = Build(2, 1 << 20, "");
  EXPECT_EQ(bytes.size(), 20u + 8 + 12);
  auto p = ParseWithLibnl(bytes);
  EXPECT_FALSE(p.backend.has_value());
  EXPECT_EQ(p.size, std::optional<uint64_t>(1 << 20));
}

TEST(BuildResizeRequestTest, BadBackendIsInvalidArgument) {
  auto with_nul = BuildResizeRequest(kNbdFamily, 1, 0, 1, std::string_view("ab\0cd", 5));
  ASSERT_FALSE(with_nul.ok());
  EXPECT_EQ(with_nul.status().code(), Code::kInvalidArgument);
  EXPECT_NE(with_nul.status().message().find("NUL"), std::string::npos) << with_nul.status().ToString();
  auto too_long = BuildResizeRequest(kNbdFamily, 1, 0, 1, std::string(4097, 'x'));
  ASSERT_FALSE(too_long.ok());
  EXPECT_EQ(too_long.status().code(), Code::kInvalidArgument);
  EXPECT_NE(too_long.status().message().find("4097"), std::string::npos) << too_long.status().ToString();
  EXPECT_TRUE(BuildResizeRequest(kNbdFamily, 1, 0, 1, std::string(4096, 'x')).ok());
}

}  // namespace
}  // namespace nbdk
