#include "netlink/nbd_genl_message.h"

#include <gtest/gtest.h>
#include <linux/nbd-netlink.h>
#include <netlink/genl/genl.h>

#include <cerrno>
#include <climits>

#include "test/netlink/genl_test_messages.h"

namespace nbdk {
namespace {

using testing::kNbdFamily;

// Layout of a one-device STATUS reply built by libnl (asserted below):
// 20 bytes of headers, DEVICE_LIST at 20, ITEM at 24, INDEX at 28,
// CONNECTED at 36.
constexpr size_t kListOffset = 20, kItemOffset = 24, kIndexOffset = 28, kConnectedOffset = 36;

nlattr AttrAt(const std::vector<uint8_t>& bytes, size_t offset) {
  nlattr a;
  std::memcpy(&a, bytes.data() + offset, sizeof(a));
  return a;
}

void SetAttrLen(std::vector<uint8_t>& bytes, size_t offset, uint16_t len) {
  std::memcpy(bytes.data() + offset + offsetof(nlattr, nla_len), &len, sizeof(len));
}

std::vector<uint8_t> OneDeviceReply() {
  auto bytes = testing::StatusReply({{3, 1}});
  EXPECT_EQ(AttrAt(bytes, kListOffset).nla_type & NLA_TYPE_MASK, NBD_ATTR_DEVICE_LIST);
  EXPECT_EQ(AttrAt(bytes, kItemOffset).nla_type & NLA_TYPE_MASK, NBD_DEVICE_ITEM);
  EXPECT_EQ(AttrAt(bytes, kIndexOffset).nla_type, NBD_DEVICE_INDEX);
  EXPECT_EQ(AttrAt(bytes, kConnectedOffset).nla_type, NBD_DEVICE_CONNECTED);
  return bytes;
}

TEST(ParseStatusReplyTest, SeveralDevicesInKernelOrder) {
  auto bytes = testing::StatusReply({{0, 0}, {1, 1}, {7, 0}, {15, 1}});
  auto devices = ParseStatusReply(bytes, kNbdFamily);
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  std::vector<NbdDeviceStatus> want = {{0, false}, {1, true}, {7, false}, {15, true}};
  EXPECT_EQ(*devices, want);
}

TEST(ParseStatusReplyTest, ZeroDevicesIsAnEmptyList) {
  auto bytes = testing::StatusReply({});
  ASSERT_EQ(bytes.size(), 20u + NLA_HDRLEN);  // headers + an empty DEVICE_LIST
  auto devices = ParseStatusReply(bytes, kNbdFamily);
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  EXPECT_TRUE(devices->empty());
}

TEST(ParseStatusReplyTest, MissingDeviceListIsCorruption) {
  auto msg = testing::NewNbdMessage(NBD_CMD_STATUS);
  auto devices = ParseStatusReply(NlMsgBytes(msg.get()), kNbdFamily);
  ASSERT_FALSE(devices.ok());
  EXPECT_EQ(devices.status().code(), Code::kCorruption);
  EXPECT_NE(devices.status().message().find("no NBD_ATTR_DEVICE_LIST"), std::string::npos)
      << devices.status().ToString();
}

TEST(ParseStatusReplyTest, ItemWithoutIndexOrConnectedIsCorruption) {
  for (int missing : {NBD_DEVICE_INDEX, NBD_DEVICE_CONNECTED}) {
    auto msg = testing::NewNbdMessage(NBD_CMD_STATUS);
    nlattr* list = nla_nest_start(msg.get(), NBD_ATTR_DEVICE_LIST);
    nlattr* item = nla_nest_start(msg.get(), NBD_DEVICE_ITEM);
    if (missing != NBD_DEVICE_INDEX) nla_put_u32(msg.get(), NBD_DEVICE_INDEX, 2);
    if (missing != NBD_DEVICE_CONNECTED) nla_put_u8(msg.get(), NBD_DEVICE_CONNECTED, 1);
    nla_nest_end(msg.get(), item);
    nla_nest_end(msg.get(), list);
    auto devices = ParseStatusReply(NlMsgBytes(msg.get()), kNbdFamily);
    ASSERT_FALSE(devices.ok());
    EXPECT_EQ(devices.status().code(), Code::kCorruption);
    const char* name = missing == NBD_DEVICE_INDEX ? "NBD_DEVICE_INDEX" : "NBD_DEVICE_CONNECTED";
    EXPECT_NE(devices.status().message().find(name), std::string::npos) << devices.status().ToString();
  }
}

TEST(ParseStatusReplyTest, UnknownAttributesAndNestedFlagOrNotAreAccepted) {
  auto msg = testing::NewNbdMessage(NBD_CMD_STATUS);
  nla_put_u32(msg.get(), NBD_ATTR_SIZE_BYTES, 99);  // not part of a STATUS reply
  nlattr* list = nla_nest_start(msg.get(), NBD_ATTR_DEVICE_LIST);
  nlattr* item = nla_nest_start(msg.get(), NBD_DEVICE_ITEM);
  nla_put_u8(msg.get(), NBD_DEVICE_CONNECTED, 0);
  nla_put_u32(msg.get(), 77, 1234);  // an attribute from a future kernel
  nla_put_u32(msg.get(), NBD_DEVICE_INDEX, 9);
  nla_nest_end(msg.get(), item);
  nla_nest_end(msg.get(), list);
  auto bytes = NlMsgBytes(msg.get());
  // libnl sets NLA_F_NESTED; the kernel's nbd (nla_nest_start_noflag) does not.
  const size_t list_offset = 20 + 8;
  ASSERT_EQ(AttrAt(bytes, list_offset).nla_type, NBD_ATTR_DEVICE_LIST | NLA_F_NESTED);
  for (int flag : {NLA_F_NESTED, 0}) {
    uint16_t type = static_cast<uint16_t>(NBD_ATTR_DEVICE_LIST | flag);
    std::memcpy(bytes.data() + list_offset + offsetof(nlattr, nla_type), &type, sizeof(type));
    auto devices = ParseStatusReply(bytes, kNbdFamily);
    ASSERT_TRUE(devices.ok()) << devices.status().ToString();
    ASSERT_EQ(devices->size(), 1u);
    EXPECT_EQ((*devices)[0], (NbdDeviceStatus{9, false}));
  }
}

TEST(ParseStatusReplyTest, DuplicateIndexIsCorruption) {
  auto devices = ParseStatusReply(testing::StatusReply({{4, 0}, {4, 1}}), kNbdFamily);
  ASSERT_FALSE(devices.ok());
  EXPECT_EQ(devices.status().code(), Code::kCorruption);
  EXPECT_NE(devices.status().message().find("nbd4 listed twice"), std::string::npos);
}

TEST(ParseStatusReplyTest, IndexBeyondIntIsCorruption) {
  auto devices = ParseStatusReply(testing::StatusReply({{0x80000000u, 0}}), kNbdFamily);
  ASSERT_FALSE(devices.ok());
  EXPECT_EQ(devices.status().code(), Code::kCorruption);
}

TEST(ParseStatusReplyTest, TruncatedAtEveryLengthFails) {
  const auto full = testing::StatusReply({{0, 0}, {1, 1}, {2, 0}});
  ASSERT_TRUE(ParseStatusReply(full, kNbdFamily).ok());
  for (size_t n = 0; n < full.size(); ++n) {
    // The buffer is cut but nlmsg_len still claims the full length.
    std::vector<uint8_t> cut(full.begin(), full.begin() + n);
    auto r = ParseStatusReply(cut, kNbdFamily);
    ASSERT_FALSE(r.ok()) << "cut at " << n;
    EXPECT_EQ(r.status().code(), Code::kCorruption) << "cut at " << n << ": " << r.status().ToString();
    // The buffer and nlmsg_len agree, but the attributes inside are cut.
    if (n >= sizeof(nlmsghdr)) {
      testing::SetNlmsgLen(cut, static_cast<uint32_t>(n));
      auto consistent = ParseStatusReply(cut, kNbdFamily);
      ASSERT_FALSE(consistent.ok()) << "consistent cut at " << n;
      EXPECT_EQ(consistent.status().code(), Code::kCorruption) << "consistent cut at " << n;
    }
  }
}

TEST(ParseStatusReplyTest, NestedAttributeWithBadLengthIsCorruption) {
  struct Case {
    size_t offset;
    uint16_t len;
    const char* expect;
  };
  const Case cases[] = {
      {kIndexOffset, 6, "NBD_DEVICE_INDEX: expected a 4-byte u32, got 2"},
      {kIndexOffset, 2, "has nla_len 2"},  // shorter than an attribute header
      {kConnectedOffset, 8, "NBD_DEVICE_CONNECTED: expected a 1-byte u8, got 4"},
      {kItemOffset, 200, "has nla_len 200"},  // beyond the enclosing list
      {kListOffset, 300, "has nla_len 300"},  // beyond the message
  };
  for (const Case& c : cases) {
    auto bytes = OneDeviceReply();
    ASSERT_TRUE(ParseStatusReply(bytes, kNbdFamily).ok());
    SetAttrLen(bytes, c.offset, c.len);
    auto r = ParseStatusReply(bytes, kNbdFamily);
    ASSERT_FALSE(r.ok()) << c.expect;
    EXPECT_EQ(r.status().code(), Code::kCorruption);
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos) << r.status().ToString();
  }
}

TEST(ParseStatusReplyTest, WrongCommandOrFamilyIsInvalidArgument) {
  auto r = ParseStatusReply(testing::LinkDead(1), kNbdFamily);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("genl command 4, expected 5"), std::string::npos) << r.status().ToString();

  auto other_family = ParseStatusReply(testing::StatusReply({{0, 0}}, kNbdFamily + 1), kNbdFamily);
  ASSERT_FALSE(other_family.ok());
  EXPECT_EQ(other_family.status().code(), Code::kInvalidArgument);
}

// Random byte flips of valid messages: every outcome is a value or a clear
// Corruption / InvalidArgument, never a crash or an out-of-bounds read (run
// under ASan to see the latter).
TEST(ParseStatusReplyTest, RandomlyCorruptedMessagesNeverCrash) {
  const auto status = testing::StatusReply({{0, 0}, {1, 1}, {2, 0}});
  const auto link_dead = testing::LinkDead(3);
  uint32_t rng = 12345;
  auto next = [&] { return rng = rng * 1103515245u + 12345u; };
  int failures = 0;
  for (int round = 0; round < 5000; ++round) {
    auto s = status;
    auto l = link_dead;
    for (int flips = 1 + next() % 4; flips > 0; --flips) {
      s[next() % s.size()] = static_cast<uint8_t>(next() >> 16);
      l[next() % l.size()] = static_cast<uint8_t>(next() >> 16);
    }
    for (Status st : {ParseStatusReply(s, kNbdFamily).status(), ParseLinkDead(l, kNbdFamily).status(),
                      SplitNetlinkDatagram(s).status()}) {
      if (st.ok()) continue;
      ++failures;
      ASSERT_TRUE(st.code() == Code::kCorruption || st.code() == Code::kInvalidArgument) << st.ToString();
    }
  }
  EXPECT_GT(failures, 0);
}

TEST(ParseLinkDeadTest, ReturnsTheIndex) {
  auto index = ParseLinkDead(testing::LinkDead(11), kNbdFamily);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ(*index, 11);
}

// Byte for byte what the kernel's nbd_mcast_index() multicasts for
// /dev/nbd3 (genlmsg_put with port 0, seq 0, flags 0, the family's version 1;
// then nla_put_u32(NBD_ATTR_INDEX)), in host (little-endian) byte order;
// written out by hand so it does not share a builder with the parser or libnl.
TEST(ParseLinkDeadTest, ParsesTheKernelsExactMulticast) {
  static_assert(kNbdFamily == 0x1a);
  const std::vector<uint8_t> kernel = {
      28,   0, 0, 0,  // nlmsg_len: 16 + 4 + 8
      0x1a, 0,        // nlmsg_type: the nbd family id
      0,    0,        // nlmsg_flags: none on a multicast
      0,    0, 0, 0,  // nlmsg_seq
      0,    0, 0, 0,  // nlmsg_pid: the kernel
      4,    1, 0, 0,  // genlmsghdr: cmd NBD_CMD_LINK_DEAD, version 1, reserved
      8,    0, 1, 0,  // nlattr: nla_len 8, nla_type NBD_ATTR_INDEX
      3,    0, 0, 0,  // u32 index
  };
  auto index = ParseLinkDead(kernel, kNbdFamily);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ(*index, 3);
  EXPECT_EQ(testing::LinkDead(3), kernel) << "the test builder drifted from the kernel's layout";
}

TEST(ParseLinkDeadTest, MissingIndexIsCorruption) {
  auto msg = testing::NewNbdMessage(NBD_CMD_LINK_DEAD);
  auto index = ParseLinkDead(NlMsgBytes(msg.get()), kNbdFamily);
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.status().code(), Code::kCorruption);
  EXPECT_NE(index.status().message().find("without NBD_ATTR_INDEX"), std::string::npos);
}

TEST(ParseLinkDeadTest, IndexOfWrongSizeIsCorruption) {
  auto msg = testing::NewNbdMessage(NBD_CMD_LINK_DEAD);
  nla_put_u8(msg.get(), NBD_ATTR_INDEX, 3);
  auto index = ParseLinkDead(NlMsgBytes(msg.get()), kNbdFamily);
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.status().code(), Code::kCorruption);
  EXPECT_NE(index.status().message().find("NBD_ATTR_INDEX: expected a 4-byte u32, got 1"), std::string::npos)
      << index.status().ToString();
}

// libnl's nla_parse would keep the last of two; which one the kernel meant is unknowable.
TEST(ParseLinkDeadTest, IndexTwiceIsCorruption) {
  auto msg = testing::NewNbdMessage(NBD_CMD_LINK_DEAD);
  nla_put_u32(msg.get(), NBD_ATTR_INDEX, 3);
  nla_put_u32(msg.get(), NBD_ATTR_INDEX, 4);
  auto index = ParseLinkDead(NlMsgBytes(msg.get()), kNbdFamily);
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.status().code(), Code::kCorruption);
  EXPECT_NE(index.status().message().find("NBD_ATTR_INDEX appears twice"), std::string::npos)
      << index.status().ToString();
}

// libnl reads through typed pointers; the codec copies first (run under
// UBSan to see a misaligned read).
TEST(ParseLinkDeadTest, MessageAtAnOddAddress) {
  const auto message = testing::LinkDead(6);
  std::vector<uint8_t> shifted(1 + message.size());
  std::memcpy(shifted.data() + 1, message.data(), message.size());
  auto index = ParseLinkDead(std::span<const uint8_t>(shifted).subspan(1), kNbdFamily);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ(*index, 6);
}

TEST(ParseLinkDeadTest, TruncatedAtEveryLengthFails) {
  const auto full = testing::LinkDead(5);
  for (size_t n = 0; n < full.size(); ++n) {
    std::vector<uint8_t> cut(full.begin(), full.begin() + n);
    EXPECT_FALSE(ParseLinkDead(cut, kNbdFamily).ok()) << "cut at " << n;
    if (n >= sizeof(nlmsghdr)) {
      testing::SetNlmsgLen(cut, static_cast<uint32_t>(n));
      auto r = ParseLinkDead(cut, kNbdFamily);
      ASSERT_FALSE(r.ok()) << "consistent cut at " << n;
      EXPECT_EQ(r.status().code(), Code::kCorruption) << "consistent cut at " << n;
    }
  }
}

TEST(ParseLinkDeadTest, StatusReplyIsNotALinkDead) {
  auto r = ParseLinkDead(testing::StatusReply({{1, 1}}), kNbdFamily);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
}

// Parses a built request with libnl, an implementation independent of ours.
struct ParsedRequest {
  nlmsghdr hdr;
  uint8_t cmd;
  std::optional<uint32_t> index;
};

ParsedRequest ParseWithLibnl(std::vector<uint8_t> bytes) {
  auto* hdr = reinterpret_cast<nlmsghdr*>(bytes.data());
  EXPECT_EQ(hdr->nlmsg_len, bytes.size());
  nlattr* attrs[NBD_ATTR_MAX + 1];
  nla_policy policy[NBD_ATTR_MAX + 1] = {};
  policy[NBD_ATTR_INDEX].type = NLA_U32;
  int err = genlmsg_parse(hdr, 0, attrs, NBD_ATTR_MAX, policy);
  EXPECT_EQ(err, 0);
  ParsedRequest out{*hdr, static_cast<genlmsghdr*>(nlmsg_data(hdr))->cmd, std::nullopt};
  if (err == 0 && attrs[NBD_ATTR_INDEX]) out.index = nla_get_u32(attrs[NBD_ATTR_INDEX]);
  return out;
}

TEST(BuildRequestTest, StatusOfOneDevice) {
  auto p = ParseWithLibnl(BuildStatusRequest(kNbdFamily, 42, 5).value());
  EXPECT_EQ(p.hdr.nlmsg_type, kNbdFamily);
  EXPECT_EQ(p.hdr.nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  EXPECT_EQ(p.hdr.nlmsg_seq, 42u);
  EXPECT_EQ(p.hdr.nlmsg_pid, 0u);
  EXPECT_EQ(p.cmd, NBD_CMD_STATUS);
  EXPECT_EQ(p.index, std::optional<uint32_t>(5));
}

TEST(BuildRequestTest, StatusOfAllDevicesHasNoIndex) {
  auto p = ParseWithLibnl(BuildStatusRequest(kNbdFamily, 1, std::nullopt).value());
  EXPECT_EQ(p.cmd, NBD_CMD_STATUS);
  EXPECT_EQ(p.hdr.nlmsg_len, NLMSG_HDRLEN + GENL_HDRLEN);
  EXPECT_FALSE(p.index.has_value());
}

TEST(BuildRequestTest, Disconnect) {
  auto p = ParseWithLibnl(BuildDisconnectRequest(kNbdFamily, 7, 12).value());
  EXPECT_EQ(p.cmd, NBD_CMD_DISCONNECT);
  EXPECT_EQ(p.hdr.nlmsg_seq, 7u);
  EXPECT_EQ(p.index, std::optional<uint32_t>(12));
}

std::vector<uint8_t> ErrorMessage(int error, uint32_t seq = 3) {
  std::vector<uint8_t> out(NLMSG_HDRLEN + sizeof(nlmsgerr));
  nlmsghdr hdr{static_cast<uint32_t>(out.size()), NLMSG_ERROR, 0, seq, 0};
  std::memcpy(out.data(), &hdr, sizeof(hdr));
  std::memcpy(out.data() + NLMSG_HDRLEN, &error, sizeof(error));
  return out;
}

TEST(SplitNetlinkDatagramTest, SplitsConcatenatedMessages) {
  auto a = testing::LinkDead(1);
  auto b = ErrorMessage(0, 9);
  std::vector<uint8_t> datagram = a;
  datagram.insert(datagram.end(), b.begin(), b.end());
  auto messages = SplitNetlinkDatagram(datagram);
  ASSERT_TRUE(messages.ok()) << messages.status().ToString();
  ASSERT_EQ(messages->size(), 2u);
  EXPECT_EQ((*messages)[0].type, kNbdFamily);
  EXPECT_EQ((*messages)[0].bytes.size(), a.size());
  EXPECT_EQ((*messages)[1].type, NLMSG_ERROR);
  EXPECT_EQ((*messages)[1].seq, 9u);
}

TEST(SplitNetlinkDatagramTest, BadLengthsAreCorruption) {
  auto zero_len = testing::LinkDead(1);
  testing::SetNlmsgLen(zero_len, 0);  // would loop forever if trusted
  EXPECT_EQ(SplitNetlinkDatagram(zero_len).status().code(), Code::kCorruption);
  auto too_long = testing::LinkDead(1);
  testing::SetNlmsgLen(too_long, 4096);
  EXPECT_EQ(SplitNetlinkDatagram(too_long).status().code(), Code::kCorruption);
  auto trailing = testing::LinkDead(1);
  trailing.resize(trailing.size() + 3);
  EXPECT_EQ(SplitNetlinkDatagram(trailing).status().code(), Code::kCorruption);
  EXPECT_TRUE(SplitNetlinkDatagram({}).ok());
}

TEST(ParseNetlinkAckTest, AckErrorAndTruncation) {
  EXPECT_TRUE(ParseNetlinkAck(ErrorMessage(0), "nbd STATUS").ok());
  Status s = ParseNetlinkAck(ErrorMessage(-EPERM), "nbd DISCONNECT of /dev/nbd1");
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_EQ(s.message().rfind("nbd DISCONNECT of /dev/nbd1: ", 0), 0u) << s.ToString();
  // The kernel refusing our message is no caller's bad input: an I/O error.
  EXPECT_EQ(ParseNetlinkAck(ErrorMessage(-EINVAL), "x").code(), Code::kIoError);
  EXPECT_EQ(ParseNetlinkAck(ErrorMessage(5), "x").code(), Code::kCorruption);
  EXPECT_EQ(ParseNetlinkAck(ErrorMessage(INT_MIN), "x").code(), Code::kCorruption);
  auto cut = ErrorMessage(0);
  cut.resize(NLMSG_HDRLEN + 2);
  EXPECT_EQ(ParseNetlinkAck(cut, "x").code(), Code::kCorruption);
  EXPECT_EQ(ParseNetlinkAck(testing::LinkDead(1), "x").code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace nbdk
