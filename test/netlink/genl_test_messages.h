// Test-only builders of kernel-like nbd genl messages, written with libnl
// (nlmsg_alloc / genlmsg_put / nla_nest_start), apart from the codec's
// builders; the byte layouts the tests assert keep both honest.
#pragma once

#include <linux/nbd-netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "netlink/nl_msg_ptr.h"

namespace nbdk::testing {

inline constexpr uint16_t kNbdFamily = 0x1a;

// An nbd genl message with headers only; aborts the test binary on OOM.
inline NlMsgPtr NewNbdMessage(uint8_t cmd, uint16_t family = kNbdFamily, uint32_t seq = 0) {
  NlMsgPtr msg(nlmsg_alloc());
  if (!msg || !genlmsg_put(msg.get(), 0, seq, family, 0, 0, cmd, NBD_GENL_VERSION)) std::abort();
  return msg;
}

// A STATUS reply as the kernel builds it: DEVICE_LIST { ITEM { INDEX u32,
// CONNECTED u8 } ... }. libnl marks nests NLA_F_NESTED (the kernel's nbd
// does not) and drops an empty nest (the kernel keeps it), so an empty list
// is reserved by hand.
inline std::vector<uint8_t> StatusReply(const std::vector<std::pair<uint32_t, uint8_t>>& devices,
                                        uint16_t family = kNbdFamily) {
  NlMsgPtr msg = NewNbdMessage(NBD_CMD_STATUS, family);
  if (devices.empty()) {
    nla_reserve(msg.get(), NBD_ATTR_DEVICE_LIST, 0);
    return NlMsgBytes(msg.get());
  }
  nlattr* list = nla_nest_start(msg.get(), NBD_ATTR_DEVICE_LIST);
  for (const auto& [index, connected] : devices) {
    nlattr* item = nla_nest_start(msg.get(), NBD_DEVICE_ITEM);
    nla_put_u32(msg.get(), NBD_DEVICE_INDEX, index);
    nla_put_u8(msg.get(), NBD_DEVICE_CONNECTED, connected);
    nla_nest_end(msg.get(), item);
  }
  nla_nest_end(msg.get(), list);
  return NlMsgBytes(msg.get());
}

inline std::vector<uint8_t> LinkDead(uint32_t index, uint16_t family = kNbdFamily) {
  NlMsgPtr msg = NewNbdMessage(NBD_CMD_LINK_DEAD, family);
  nla_put_u32(msg.get(), NBD_ATTR_INDEX, index);
  return NlMsgBytes(msg.get());
}

// Sets nlmsg_len of the message at the front of `bytes`.
inline void SetNlmsgLen(std::vector<uint8_t>& bytes, uint32_t len) {
  std::memcpy(bytes.data() + offsetof(nlmsghdr, nlmsg_len), &len, sizeof(len));
}

}  // namespace nbdk::testing
