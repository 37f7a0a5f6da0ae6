// A libnl message (nl_msg) owned by a unique_ptr, and the copy of its bytes
// that goes onto a socket or into a test.
#pragma once

#include <netlink/msg.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace nbdk {

struct NlMsgDeleter {
  void operator()(nl_msg* msg) const { nlmsg_free(msg); }
};
using NlMsgPtr = std::unique_ptr<nl_msg, NlMsgDeleter>;

// The nlmsg_len bytes of a built message, headers included.
inline std::vector<uint8_t> NlMsgBytes(nl_msg* msg) {
  const nlmsghdr* hdr = nlmsg_hdr(msg);
  const auto* bytes = reinterpret_cast<const uint8_t*>(hdr);
  return {bytes, bytes + hdr->nlmsg_len};
}

}  // namespace nbdk
