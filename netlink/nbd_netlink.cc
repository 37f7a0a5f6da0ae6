#include "netlink/nbd_netlink.h"

#include <linux/nbd-netlink.h>
#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/socket.h>

#include <algorithm>
#include <string>

#include "base/log.h"
#include "netlink/nbd_device.h"
#include "netlink/nbd_sysfs.h"

namespace nbdk {
namespace {

std::string DeviceName(int index) { return NbdDevicePath(index); }

nbdk::Status CheckIndex(int index) {
  if (index < 0) {
    return nbdk::Status::InvalidArgument("nbd device index " + std::to_string(index) + " is negative");
  }
  return nbdk::Status::Ok();
}

}  // namespace

NbdNetlink::NbdNetlink(Token, EventLoop& loop, NlSocketPtr command, uint16_t family_id, uint32_t mc_group_id)
    : loop_(loop), command_(std::move(command)), family_id_(family_id), mc_group_id_(mc_group_id) {}

NbdNetlink::~NbdNetlink() {
  // The poll watch must be closed before its socket's fd goes away.
  listener_.reset();
  multicast_.reset();
}

Result<std::unique_ptr<NbdNetlink>> NbdNetlink::Open(EventLoop& loop) {
  NBDK_CHECK_LOOP_THREAD(loop);
  auto sock = ConnectGenlSocket(kCommandTimeout);
  if (!sock.ok()) return sock.status();
  int family = genl_ctrl_resolve(sock->get(), NBD_GENL_FAMILY_NAME);
  if (family == -NLE_OBJ_NOTFOUND) {
    return nbdk::Status::Unavailable("generic netlink family 'nbd' not found: is the nbd kernel module loaded?");
  }
  if (family < 0) {
    return nbdk::Status::Unavailable(std::string("resolve generic netlink family 'nbd': ") + nl_geterror(family));
  }
  int group = genl_ctrl_resolve_grp(sock->get(), NBD_GENL_FAMILY_NAME, NBD_GENL_MCAST_GROUP_NAME);
  if (group == -NLE_OBJ_NOTFOUND) {
    return nbdk::Status::Unavailable(
        "generic netlink family 'nbd' has no multicast group 'nbd_mc_group': "
        "this kernel's nbd cannot report dead links");
  }
  if (group < 0) {
    return nbdk::Status::Unavailable(std::string("resolve multicast group 'nbd_mc_group' of family 'nbd': ") +
                                     nl_geterror(group));
  }
  NBDK_LOG_INFO("nbd_netlink_open", {{"family_id", family}, {"mc_group_id", group}});
  return std::make_unique<NbdNetlink>(Token(), loop, std::move(*sock), static_cast<uint16_t>(family),
                                      static_cast<uint32_t>(group));
}

Result<std::vector<NbdDeviceStatus>> NbdNetlink::QueryStatus(std::optional<uint32_t> index) {
  const std::string what = index ? "nbd STATUS of " + DeviceName(static_cast<int>(*index)) : "nbd STATUS";
  uint32_t seq = nl_socket_use_seq(command_.get());
  auto request = BuildStatusRequest(family_id_, seq, index);
  if (!request.ok()) return request.status().WithContext(what);
  auto replies = GenlExchange(command_.get(), *request, seq, what, kCommandTimeout);
  if (!replies.ok()) return replies.status();
  if (replies->size() != 1) {
    return nbdk::Status::Corruption(what + ": expected one reply before the ack, got " +
                                    std::to_string(replies->size()));
  }
  return ParseStatusReply(replies->front(), family_id_);
}

Result<std::vector<NbdDeviceStatus>> NbdNetlink::Status() {
  NBDK_CHECK_LOOP_THREAD(loop_);
  return QueryStatus(std::nullopt);
}

Result<NbdDeviceStatus> NbdNetlink::Status(int index) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  NBDK_RETURN_IF_ERROR(CheckIndex(index));
  auto devices = QueryStatus(static_cast<uint32_t>(index));
  if (!devices.ok()) return devices.status();
  for (const NbdDeviceStatus& d : *devices) {
    if (d.index == index) return d;
  }
  if (!devices->empty()) {
    return nbdk::Status::Corruption("nbd STATUS of " + DeviceName(index) + ": reply lists " +
                                    NbdKernelName(devices->front().index) + " instead");
  }
  return nbdk::Status::NotFound(DeviceName(index) + " does not exist (nbd STATUS lists no such device)");
}

nbdk::Status NbdNetlink::Disconnect(int index) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  NBDK_RETURN_IF_ERROR(CheckIndex(index));
  uint32_t seq = nl_socket_use_seq(command_.get());
  const std::string what = "nbd DISCONNECT of " + DeviceName(index);
  auto request = BuildDisconnectRequest(family_id_, seq, static_cast<uint32_t>(index));
  if (!request.ok()) return request.status().WithContext(what);
  auto replies = GenlExchange(command_.get(), *request, seq, what, kCommandTimeout);
  if (!replies.ok()) return replies.status();
  NBDK_LOG_INFO("nbd_disconnect_sent", {{"device", DeviceName(index)}});
  return nbdk::Status::Ok();
}

Result<int> NbdNetlink::FindFreeDevice() {
  NBDK_CHECK_LOOP_THREAD(loop_);
  auto devices = Status();
  if (!devices.ok()) return devices.status();
  std::sort(devices->begin(), devices->end(),
            [](const NbdDeviceStatus& a, const NbdDeviceStatus& b) { return a.index < b.index; });
  for (const NbdDeviceStatus& d : *devices) {
    if (d.connected) continue;
    auto in_use = NbdPidFileExists(d.index);
    if (!in_use.ok()) return in_use.status();
    if (!*in_use) return d.index;
  }
  return nbdk::Status::ResourceExhausted("no free nbd device: all " + std::to_string(devices->size()) +
                                         " are connected or in use (the nbd module's nbds_max sets how many exist)");
}

nbdk::Status NbdNetlink::SubscribeLinkDead(std::function<void(int index)> cb) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  if (listener_) return nbdk::Status::FailedPrecondition("already subscribed to nbd LINK_DEAD");
  auto sock = ConnectGenlSocket(kCommandTimeout);
  if (!sock.ok()) return sock.status().WithContext("subscribe to nbd LINK_DEAD");
  int err = nl_socket_add_membership(sock->get(), static_cast<int>(mc_group_id_));
  if (err < 0) {
    return nbdk::Status::IoError(std::string("join multicast group 'nbd_mc_group': ") + nl_geterror(err));
  }
  err = nl_socket_set_nonblocking(sock->get());
  if (err < 0) {
    return nbdk::Status::IoError(std::string("make the nbd multicast socket non-blocking: ") + nl_geterror(err));
  }
  // Declared after `sock`: on failure the watch is closed before the socket.
  // (The socket's SO_RCVTIMEO is moot here: it is non-blocking.)
  auto listener = std::make_unique<LinkDeadListener>(loop_, nl_socket_get_fd(sock->get()), family_id_, std::move(cb));
  NBDK_RETURN_IF_ERROR(listener->Start());
  multicast_ = std::move(*sock);
  listener_ = std::move(listener);
  return nbdk::Status::Ok();
}

}  // namespace nbdk
