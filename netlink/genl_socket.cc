#include "netlink/genl_socket.h"

#include <linux/netlink.h>
#include <netlink/errno.h>
#include <netlink/genl/genl.h>
#include <netlink/socket.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <string>

#include "netlink/nbd_genl_message.h"

namespace nbdk {

void NlSockDeleter::operator()(nl_sock* sock) const { nl_socket_free(sock); }

Result<NlSocketPtr> ConnectGenlSocket(std::chrono::milliseconds receive_timeout) {
  NlSocketPtr sock(nl_socket_alloc());
  if (!sock) return Status::ResourceExhausted("allocate a netlink socket: out of memory");
  int err = genl_connect(sock.get());
  if (err < 0) {
    return Status::IoError(std::string("connect a generic netlink socket: ") + nl_geterror(err));
  }
  timeval tv{};
  tv.tv_sec = receive_timeout.count() / 1000;
  tv.tv_usec = (receive_timeout.count() % 1000) * 1000;
  if (setsockopt(nl_socket_get_fd(sock.get()), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
    return Status::FromErrno(errno, "set a receive timeout on the generic netlink socket");
  }
  return sock;
}

namespace {

// Receives one datagram into `buf` (resized to it), sized first with
// MSG_PEEK | MSG_TRUNC so a large reply is never cut. Returns false with
// `err` set on failure.
bool ReceiveDatagram(int fd, std::vector<uint8_t>& buf, int& err) {
  ssize_t len = recv(fd, nullptr, 0, MSG_PEEK | MSG_TRUNC);
  if (len < 0) {
    err = errno;
    return false;
  }
  buf.resize(len > 0 ? static_cast<size_t>(len) : 1);
  ssize_t n = recv(fd, buf.data(), buf.size(), 0);
  if (n < 0) {
    err = errno;
    return false;
  }
  buf.resize(static_cast<size_t>(n));
  return true;
}

}  // namespace

Result<std::vector<std::vector<uint8_t>>> GenlExchange(nl_sock* sock, std::span<const uint8_t> request, uint32_t seq,
                                                       std::string_view what, std::chrono::milliseconds deadline) {
  const std::string context(what);
  int fd = nl_socket_get_fd(sock);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;  // nl_pid 0: the kernel
  ssize_t sent =
      sendto(fd, request.data(), request.size(), 0, reinterpret_cast<const sockaddr*>(&kernel), sizeof(kernel));
  if (sent < 0) return Status::FromErrno(errno, context + ": send");
  if (static_cast<size_t>(sent) != request.size()) {
    return Status::IoError(context + ": sent " + std::to_string(sent) + " of " + std::to_string(request.size()) +
                           " bytes");
  }

  const auto give_up = std::chrono::steady_clock::now() + deadline;
  std::vector<std::vector<uint8_t>> replies;
  std::vector<uint8_t> buf;
  for (;;) {
    if (std::chrono::steady_clock::now() >= give_up) {
      return Status::DeadlineExceeded(context + ": no answer from the kernel within " +
                                      std::to_string(deadline.count()) + " ms");
    }
    int err = 0;
    if (!ReceiveDatagram(fd, buf, err)) {
      // EAGAIN: SO_RCVTIMEO expired; the deadline check above decides.
      if (err == EINTR || err == EAGAIN || err == EWOULDBLOCK) continue;
      return Status::FromErrno(err, context + ": receive");
    }
    auto messages = SplitNetlinkDatagram(buf);
    if (!messages.ok()) return messages.status().WithContext(context);
    for (const NetlinkMessage& m : *messages) {
      if (m.seq != seq) continue;  // late answer to an earlier, abandoned request
      if (m.type == NLMSG_ERROR) {
        NBDK_RETURN_IF_ERROR(ParseNetlinkAck(m.bytes, context));
        return replies;
      }
      if (m.type == NLMSG_NOOP || m.type == NLMSG_DONE) continue;
      replies.emplace_back(m.bytes.begin(), m.bytes.end());
    }
  }
}

}  // namespace nbdk
