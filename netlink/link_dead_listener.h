// LinkDeadListener: turns nbd LINK_DEAD multicasts arriving on a datagram
// socket into callbacks on the loop thread.
//
// The kernel multicasts one NBD_CMD_LINK_DEAD per dead connection, for a
// crash (kill -9) and for a stop on purpose (SIGTERM) alike: the caller
// tells planned from unplanned by its own state.
//
// Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "base/event_loop.h"
#include "base/status.h"
#include "base/uv_handle.h"

namespace nbdk {

class LinkDeadListener {
 public:
  using Callback = std::function<void(int index)>;

  // Watches `fd`, a non-blocking datagram socket this object does not own
  // (in production a netlink socket joined to nbd_mc_group; in tests one end
  // of a socketpair). `family_id` is the nbd genl family. The fd must stay
  // open until this object is destroyed: the destructor stops and closes the
  // poll watch, after which the owner may close the fd.
  LinkDeadListener(EventLoop& loop, int fd, uint16_t family_id, Callback on_link_dead);
  ~LinkDeadListener();
  LinkDeadListener(const LinkDeadListener&) = delete;
  LinkDeadListener& operator=(const LinkDeadListener&) = delete;

  // Starts watching. Each LINK_DEAD calls on_link_dead(index), in arrival
  // order. Malformed messages and other commands are logged and skipped. A
  // receive-buffer overrun (ENOBUFS: events were lost) is logged as
  // nbd_link_dead_events_lost; the caller's own child-exit watch must cover
  // for it. A poll error (the fd broke) is logged and stops the watch for
  // good. The callback may destroy this listener.
  Status Start();

  // Handles one received datagram (exposed so tests can feed bytes directly).
  // Returns false when the callback destroyed this listener.
  bool HandleDatagram(std::span<const uint8_t> datagram);

 private:
  void OnReadable(int status);

  int fd_;
  uint16_t family_id_;
  Callback on_link_dead_;
  FdWatch watch_;
  // Shared with running callbacks so they can tell the listener was destroyed.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace nbdk
