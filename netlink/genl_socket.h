// A libnl generic-netlink socket owned by a unique_ptr, and a synchronous
// request/ack exchange on it. Internal to netlink/ (used by NbdNetlink).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"

struct nl_sock;  // libnl; <netlink/socket.h> stays out of this header

namespace nbdk {

struct NlSockDeleter {
  void operator()(nl_sock* sock) const;  // nl_socket_free: also closes the fd
};
using NlSocketPtr = std::unique_ptr<nl_sock, NlSockDeleter>;

// Allocates a socket and connects it to NETLINK_GENERIC. Every blocking
// receive on it (ours and libnl's genl_ctrl_resolve) gives up after
// `receive_timeout` (SO_RCVTIMEO), so it never hangs. Failure leaves nothing
// open.
Result<NlSocketPtr> ConnectGenlSocket(std::chrono::milliseconds receive_timeout);

// Sends `request` (a complete message whose nlmsg_seq is `seq`, asking for an
// ack) and receives until the kernel's NLMSG_ERROR for `seq` arrives.
// Messages for other sequence numbers (a late answer to an earlier request
// that timed out) are skipped. Returns the copies of the reply messages that
// came before the ack; a kernel error becomes a Status starting with `what`.
// Gives up with DeadlineExceeded after `deadline` in total. Blocking: meant
// for requests the kernel answers at once.
Result<std::vector<std::vector<uint8_t>>> GenlExchange(nl_sock* sock, std::span<const uint8_t> request, uint32_t seq,
                                                       std::string_view what, std::chrono::milliseconds deadline);

}  // namespace nbdk
