#include "netlink/link_dead_listener.h"

#include <linux/netlink.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "base/log.h"
#include "netlink/nbd_device.h"
#include "netlink/nbd_genl_message.h"

namespace nbdk {

LinkDeadListener::LinkDeadListener(EventLoop& loop, int fd, uint16_t family_id, Callback on_link_dead)
    : fd_(fd), family_id_(family_id), on_link_dead_(std::move(on_link_dead)), watch_(loop, fd) {}

LinkDeadListener::~LinkDeadListener() { *alive_ = false; }

Status LinkDeadListener::Start() {
  return watch_.Start(UV_READABLE, [this](int status, int) { OnReadable(status); });
}

void LinkDeadListener::OnReadable(int status) {
  if (status < 0) {
    // libuv has already stopped the watch: no more events will come.
    NBDK_LOG_ERROR("nbd_link_dead_watch_stopped", {{"fd", fd_}, {"error", uv_strerror(status)}});
    watch_.Stop();
    return;
  }
  // LINK_DEAD messages are ~32 bytes; anything near this size is not ours.
  std::array<uint8_t, 8192> buf;
  // Drain everything queued: one wake-up may stand for many multicasts.
  for (;;) {
    ssize_t n = recv(fd_, buf.data(), buf.size(), MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0) {
      int err = errno;
      if (err == EINTR) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) return;
      if (err == ENOBUFS) {
        NBDK_LOG_ERROR("nbd_link_dead_events_lost", {{"fd", fd_}, {"error", std::strerror(err)}});
        continue;
      }
      NBDK_LOG_ERROR("nbd_link_dead_receive_failed", {{"fd", fd_}, {"error", std::strerror(err)}});
      return;
    }
    if (static_cast<size_t>(n) > buf.size()) {
      NBDK_LOG_WARN("nbd_multicast_skipped",
                    {{"reason", "datagram larger than buffer"}, {"bytes", static_cast<int64_t>(n)}});
      continue;
    }
    if (!HandleDatagram(std::span<const uint8_t>(buf.data(), static_cast<size_t>(n)))) return;
  }
}

bool LinkDeadListener::HandleDatagram(std::span<const uint8_t> datagram) {
  auto messages = SplitNetlinkDatagram(datagram);
  if (!messages.ok()) {
    NBDK_LOG_WARN("nbd_multicast_skipped", {{"error", messages.status().ToString()}});
    return true;
  }
  std::shared_ptr<bool> alive = alive_;
  for (const NetlinkMessage& m : *messages) {
    auto index = ParseLinkDead(m.bytes, family_id_);
    if (!index.ok()) {
      NBDK_LOG_WARN("nbd_multicast_skipped", {{"error", index.status().ToString()}});
      continue;
    }
    NBDK_LOG_INFO("nbd_link_dead", {{"device", NbdDevicePath(*index)}});
    // Copy: the callback may destroy this listener and with it on_link_dead_.
    Callback cb = on_link_dead_;
    cb(*index);
    if (!*alive) return false;
  }
  return true;
}

}  // namespace nbdk
