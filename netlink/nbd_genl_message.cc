#include "netlink/nbd_genl_message.h"

#include <linux/genetlink.h>
#include <linux/nbd-netlink.h>
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <functional>
#include <string>

#include "netlink/nl_msg_ptr.h"

namespace nbdk {
namespace {

// Reads a T from possibly unaligned bytes; the caller checked the size.
template <typename T>
T Load(std::span<const uint8_t> bytes) {
  T value;
  std::memcpy(&value, bytes.data(), sizeof(T));
  return value;
}

// A request of the nbd family carrying NBD_ATTR_INDEX when given, with room
// for exactly `more_attr_bytes` besides (nlmsg_alloc's default of a page
// would not hold a 4096-byte backend identifier). Port 0: the kernel knows
// the sender's.
Result<NlMsgPtr> NewRequest(uint16_t family_id, uint32_t seq, uint8_t cmd,
                            std::optional<uint32_t> index, size_t more_attr_bytes) {
  const size_t index_bytes = index ? nla_total_size(sizeof(uint32_t)) : 0;
  NlMsgPtr msg(nlmsg_alloc_size(NLMSG_HDRLEN + GENL_HDRLEN + index_bytes + more_attr_bytes));
  // libnl fails a put only for want of memory or room, and the room is sized.
  if (!msg ||
      !genlmsg_put(msg.get(), 0, seq, family_id, 0, NLM_F_REQUEST | NLM_F_ACK, cmd, NBD_GENL_VERSION) ||
      (index && nla_put_u32(msg.get(), NBD_ATTR_INDEX, *index) < 0)) {
    return Status::ResourceExhausted("build an nbd request: out of memory");
  }
  return msg;
}

Result<std::vector<uint8_t>> BuildRequest(uint16_t family_id, uint32_t seq, uint8_t cmd,
                                          std::optional<uint32_t> index) {
  auto msg = NewRequest(family_id, seq, cmd, index, 0);
  if (!msg.ok()) return msg.status();
  return NlMsgBytes(msg->get());
}

using AttrVisitor = std::function<Status(uint16_t type, std::span<const uint8_t> payload)>;

// Visits each attribute of `area`, failing on any header or length that does
// not fit. Attribute types are masked (NLA_F_NESTED may be set or not).
Status ForEachAttr(std::span<const uint8_t> area, std::string_view where, const AttrVisitor& visit) {
  while (!area.empty()) {
    if (area.size() < NLA_HDRLEN) {
      return Status::Corruption(std::string(where) + ": " + std::to_string(area.size()) +
                                " trailing byte(s), too short for an attribute header");
    }
    auto attr = Load<nlattr>(area);
    if (attr.nla_len < NLA_HDRLEN || attr.nla_len > area.size()) {
      return Status::Corruption(std::string(where) + ": attribute type " +
                                std::to_string(attr.nla_type & NLA_TYPE_MASK) + " has nla_len " +
                                std::to_string(attr.nla_len) + " but " +
                                std::to_string(area.size()) + " byte(s) remain");
    }
    NBDK_RETURN_IF_ERROR(visit(attr.nla_type & NLA_TYPE_MASK,
                               area.subspan(NLA_HDRLEN, attr.nla_len - NLA_HDRLEN)));
    // The last attribute's padding may be cut off by the enclosing length.
    area = area.subspan(std::min<size_t>(NLA_ALIGN(attr.nla_len), area.size()));
  }
  return Status::Ok();
}

Result<uint32_t> U32Payload(std::span<const uint8_t> payload, std::string_view what) {
  if (payload.size() != sizeof(uint32_t)) {
    return Status::Corruption(std::string(what) + ": expected a 4-byte u32, got " +
                              std::to_string(payload.size()) + " byte(s)");
  }
  return Load<uint32_t>(payload);
}

Result<int> IndexPayload(std::span<const uint8_t> payload, std::string_view what) {
  auto value = U32Payload(payload, what);
  if (!value.ok()) return value.status();
  if (*value > static_cast<uint32_t>(INT_MAX)) {
    return Status::Corruption(std::string(what) + ": device index " + std::to_string(*value) +
                              " out of range");
  }
  return static_cast<int>(*value);
}

// Checks the nlmsghdr and genlmsghdr of a message of `family_id` carrying
// `cmd`; returns its attribute area.
Result<std::span<const uint8_t>> GenlAttrArea(std::span<const uint8_t> message, uint16_t family_id,
                                              uint8_t cmd, std::string_view what) {
  constexpr size_t kHeaders = NLMSG_HDRLEN + GENL_HDRLEN;
  if (message.size() < NLMSG_HDRLEN) {
    return Status::Corruption(std::string(what) + ": " + std::to_string(message.size()) +
                              " byte(s), too short for a netlink header");
  }
  auto hdr = Load<nlmsghdr>(message);
  if (hdr.nlmsg_len < kHeaders || hdr.nlmsg_len > message.size()) {
    return Status::Corruption(std::string(what) + ": nlmsg_len " + std::to_string(hdr.nlmsg_len) +
                              " does not fit the " + std::to_string(message.size()) +
                              " byte(s) received (headers need " + std::to_string(kHeaders) + ")");
  }
  if (hdr.nlmsg_type != family_id) {
    return Status::InvalidArgument(std::string(what) + ": message type " +
                                   std::to_string(hdr.nlmsg_type) + " is not the nbd family (" +
                                   std::to_string(family_id) + ")");
  }
  auto genl = Load<genlmsghdr>(message.subspan(NLMSG_HDRLEN));
  if (genl.cmd != cmd) {
    return Status::InvalidArgument(std::string(what) + ": genl command " +
                                   std::to_string(genl.cmd) + ", expected " + std::to_string(cmd));
  }
  return message.subspan(kHeaders, hdr.nlmsg_len - kHeaders);
}

Result<NbdDeviceStatus> ParseDeviceItem(std::span<const uint8_t> item) {
  std::optional<int> index;
  std::optional<bool> connected;
  Status s = ForEachAttr(item, "NBD_DEVICE_ITEM", [&](uint16_t type, std::span<const uint8_t> p) {
    if (type == NBD_DEVICE_INDEX) {
      auto v = IndexPayload(p, "NBD_DEVICE_INDEX");
      if (!v.ok()) return v.status();
      index = *v;
    } else if (type == NBD_DEVICE_CONNECTED) {
      if (p.size() != 1) {
        return Status::Corruption("NBD_DEVICE_CONNECTED: expected a 1-byte u8, got " +
                                  std::to_string(p.size()) + " byte(s)");
      }
      connected = p[0] != 0;
    }
    return Status::Ok();  // unknown attributes: newer kernels may add some
  });
  NBDK_RETURN_IF_ERROR(s);
  if (!index) return Status::Corruption("NBD_DEVICE_ITEM without NBD_DEVICE_INDEX");
  if (!connected) {
    return Status::Corruption("NBD_DEVICE_ITEM for nbd" + std::to_string(*index) +
                              " without NBD_DEVICE_CONNECTED");
  }
  return NbdDeviceStatus{*index, *connected};
}

}  // namespace

Result<std::vector<uint8_t>> BuildStatusRequest(uint16_t family_id, uint32_t seq,
                                                std::optional<uint32_t> index) {
  return BuildRequest(family_id, seq, NBD_CMD_STATUS, index);
}

Result<std::vector<uint8_t>> BuildDisconnectRequest(uint16_t family_id, uint32_t seq,
                                                    uint32_t index) {
  return BuildRequest(family_id, seq, NBD_CMD_DISCONNECT, index);
}

Result<std::vector<uint8_t>> BuildResizeRequest(uint16_t family_id, uint32_t seq, uint32_t index,
                                                uint64_t size_bytes, std::string_view backend) {
  constexpr size_t kMaxBackend = 4096;
  if (backend.size() > kMaxBackend) {
    return Status::InvalidArgument("nbd backend identifier of " + std::to_string(backend.size()) +
                                   " bytes is over " + std::to_string(kMaxBackend));
  }
  if (backend.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument("nbd backend identifier holds a NUL byte");
  }
  const std::string terminated(backend);  // nla_put_string sends its NUL too
  const size_t backend_bytes = backend.empty() ? 0 : nla_total_size(backend.size() + 1);
  auto msg = NewRequest(family_id, seq, NBD_CMD_RECONFIGURE, index,
                        nla_total_size(sizeof(uint64_t)) + backend_bytes);
  if (!msg.ok()) return msg.status();
  if (nla_put_u64(msg->get(), NBD_ATTR_SIZE_BYTES, size_bytes) < 0 ||
      (!backend.empty() &&
       nla_put_string(msg->get(), NBD_ATTR_BACKEND_IDENTIFIER, terminated.c_str()) < 0)) {
    return Status::ResourceExhausted("build an nbd RECONFIGURE request: out of memory");
  }
  return NlMsgBytes(msg->get());
}

Result<std::vector<NetlinkMessage>> SplitNetlinkDatagram(std::span<const uint8_t> datagram) {
  std::vector<NetlinkMessage> out;
  while (!datagram.empty()) {
    if (datagram.size() < NLMSG_HDRLEN) {
      return Status::Corruption("netlink datagram: " + std::to_string(datagram.size()) +
                                " trailing byte(s), too short for a netlink header");
    }
    auto hdr = Load<nlmsghdr>(datagram);
    if (hdr.nlmsg_len < NLMSG_HDRLEN || hdr.nlmsg_len > datagram.size()) {
      return Status::Corruption("netlink datagram: nlmsg_len " + std::to_string(hdr.nlmsg_len) +
                                " but " + std::to_string(datagram.size()) + " byte(s) remain");
    }
    out.push_back({hdr.nlmsg_type, hdr.nlmsg_flags, hdr.nlmsg_seq, hdr.nlmsg_pid,
                   datagram.subspan(0, hdr.nlmsg_len)});
    datagram = datagram.subspan(std::min<size_t>(NLMSG_ALIGN(hdr.nlmsg_len), datagram.size()));
  }
  return out;
}

Status ParseNetlinkAck(std::span<const uint8_t> message, std::string_view what) {
  if (message.size() < NLMSG_HDRLEN + sizeof(int)) {
    return Status::Corruption(std::string(what) + ": netlink error message of " +
                              std::to_string(message.size()) + " byte(s) is truncated");
  }
  auto hdr = Load<nlmsghdr>(message);
  if (hdr.nlmsg_type != NLMSG_ERROR) {
    return Status::InvalidArgument(std::string(what) + ": message type " +
                                   std::to_string(hdr.nlmsg_type) + " is not NLMSG_ERROR");
  }
  if (hdr.nlmsg_len < NLMSG_HDRLEN + sizeof(int) || hdr.nlmsg_len > message.size()) {
    return Status::Corruption(std::string(what) + ": netlink error message has nlmsg_len " +
                              std::to_string(hdr.nlmsg_len) + " for " +
                              std::to_string(message.size()) + " byte(s)");
  }
  int error = Load<int>(message.subspan(NLMSG_HDRLEN));
  if (error == 0) return Status::Ok();
  if (error > 0 || error == INT_MIN) {
    return Status::Corruption(std::string(what) + ": netlink error code " +
                              std::to_string(error) + " is not a negative errno");
  }
  return Status::FromErrno(-error, what);
}

Result<std::vector<NbdDeviceStatus>> ParseStatusReply(std::span<const uint8_t> message,
                                                      uint16_t family_id) {
  auto area = GenlAttrArea(message, family_id, NBD_CMD_STATUS, "nbd STATUS reply");
  if (!area.ok()) return area.status();
  std::optional<std::vector<NbdDeviceStatus>> devices;
  Status s = ForEachAttr(*area, "nbd STATUS reply", [&](uint16_t type, std::span<const uint8_t> p) {
    if (type != NBD_ATTR_DEVICE_LIST) return Status::Ok();
    if (devices) return Status::Corruption("nbd STATUS reply: NBD_ATTR_DEVICE_LIST appears twice");
    devices.emplace();
    return ForEachAttr(p, "NBD_ATTR_DEVICE_LIST", [&](uint16_t item_type, std::span<const uint8_t> item) {
      if (item_type != NBD_DEVICE_ITEM) return Status::Ok();
      auto device = ParseDeviceItem(item);
      if (!device.ok()) return device.status();
      for (const auto& seen : *devices) {
        if (seen.index == device->index) {
          return Status::Corruption("NBD_ATTR_DEVICE_LIST: nbd" + std::to_string(seen.index) +
                                    " listed twice");
        }
      }
      devices->push_back(*device);
      return Status::Ok();
    });
  });
  NBDK_RETURN_IF_ERROR(s);
  if (!devices) return Status::Corruption("nbd STATUS reply has no NBD_ATTR_DEVICE_LIST");
  return std::move(*devices);
}

Result<int> ParseLinkDead(std::span<const uint8_t> message, uint16_t family_id) {
  auto area = GenlAttrArea(message, family_id, NBD_CMD_LINK_DEAD, "nbd LINK_DEAD");
  if (!area.ok()) return area.status();
  std::optional<int> index;
  Status s = ForEachAttr(*area, "nbd LINK_DEAD", [&](uint16_t type, std::span<const uint8_t> p) {
    if (type != NBD_ATTR_INDEX) return Status::Ok();
    auto v = IndexPayload(p, "NBD_ATTR_INDEX");
    if (!v.ok()) return v.status();
    index = *v;
    return Status::Ok();
  });
  NBDK_RETURN_IF_ERROR(s);
  if (!index) return Status::Corruption("nbd LINK_DEAD without NBD_ATTR_INDEX");
  return *index;
}

}  // namespace nbdk
