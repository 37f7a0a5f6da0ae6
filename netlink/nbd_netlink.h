// NbdNetlink: nbdkeeper's client of the kernel's "nbd" generic-netlink
// family: device status, disconnect, and LINK_DEAD notifications.
//
// Two sockets:
//  - a command socket for STATUS / DISCONNECT. Each call is a synchronous
//    request/reply on the loop thread. That is acceptable because the kernel
//    answers these at once, and it can never hang: every receive has a
//    timeout (SO_RCVTIMEO, kCommandTimeout) and a call fails with
//    DeadlineExceeded after kCommandTimeout in total.
//  - after SubscribeLinkDead(), a non-blocking socket joined to the
//    nbd_mc_group multicast group, watched by uv_poll on the loop.
//
// Numbers come from <linux/nbd-netlink.h>. See netlink/nbd_sysfs.h for the
// device's cookie (/sys/block/nbdX/backend) and why /sys/block/nbdX/pid must
// not be trusted.
//
// Loop thread only: every method, the callback and destruction.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "base/event_loop.h"
#include "base/status.h"
#include "netlink/genl_socket.h"
#include "netlink/link_dead_listener.h"
#include "netlink/nbd_genl_message.h"

namespace nbdk {

class NbdNetlink {
 public:
  static constexpr std::chrono::milliseconds kCommandTimeout{1000};

  // Only Open() can make the token that the constructor needs.
  class Token {
    friend class NbdNetlink;
    explicit Token() = default;
  };

  // Connects the command socket and resolves the "nbd" family and its
  // "nbd_mc_group" group. Unavailable with "generic netlink family 'nbd' not
  // found: is the nbd kernel module loaded?" when the module is absent.
  // `loop` must outlive the returned object. Failure leaves nothing open.
  static Result<std::unique_ptr<NbdNetlink>> Open(EventLoop& loop);

  // Stops and closes the multicast poll watch, then frees the sockets.
  ~NbdNetlink();
  NbdNetlink(const NbdNetlink&) = delete;
  NbdNetlink& operator=(const NbdNetlink&) = delete;

  // NBD_CMD_STATUS for every nbd device the kernel has, in its order.
  Result<std::vector<NbdDeviceStatus>> Status();

  // NBD_CMD_STATUS for /dev/nbd<index>. NotFound when the kernel has no such
  // device; InvalidArgument for a negative index.
  Result<NbdDeviceStatus> Status(int index);

  // NBD_CMD_DISCONNECT of /dev/nbd<index> (needs CAP_SYS_ADMIN). The kernel
  // acks a device that is not connected with success and rejects an unknown
  // index with EINVAL (InvalidArgument). The teardown itself finishes
  // asynchronously: poll Status(index) to see it disconnected.
  nbdk::Status Disconnect(int index);

  // The lowest index that is not connected and has no /sys/block/nbdX/pid.
  // ResourceExhausted when every device is taken (or none exist).
  // Racy by nature: another mapper may take the device between this answer
  // and the caller's map; the kernel then refuses the CONNECT (EBUSY) and
  // `rbd-nbd map --device` fails, so retry with a new answer. Without
  // --device, rbd-nbd picks a free device itself.
  Result<int> FindFreeDevice();

  // Joins nbd_mc_group on a second, non-blocking socket watched on the loop;
  // every NBD_CMD_LINK_DEAD then calls cb(index) on the loop thread (see
  // LinkDeadListener for what is and is not delivered). FailedPrecondition
  // when already subscribed. Failure leaves no subscription behind.
  nbdk::Status SubscribeLinkDead(std::function<void(int index)> cb);

  uint16_t family_id() const { return family_id_; }
  uint32_t multicast_group_id() const { return mc_group_id_; }

  NbdNetlink(Token, EventLoop& loop, NlSocketPtr command, uint16_t family_id, uint32_t mc_group_id);

 private:
  Result<std::vector<NbdDeviceStatus>> QueryStatus(std::optional<uint32_t> index);

  EventLoop& loop_;
  NlSocketPtr command_;
  uint16_t family_id_;
  uint32_t mc_group_id_;
  // Declared before listener_ so the poll watch is destroyed first.
  NlSocketPtr multicast_;
  std::unique_ptr<LinkDeadListener> listener_;
};

}  // namespace nbdk
