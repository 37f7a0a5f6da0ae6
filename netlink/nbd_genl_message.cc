#include "netlink/nbd_genl_message.h"

#include <linux/genetlink.h>
#include <linux/nbd-netlink.h>
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <algorithm>
#include <array>
#include <bitset>
#include <climits>
#include <cstring>
#include <initializer_list>
#include <string>

#include "netlink/nl_msg_ptr.h"

namespace nbdk {
namespace {

// A request of the nbd family carrying NBD_ATTR_INDEX when given, with room
// for exactly `more_attr_bytes` besides (nlmsg_alloc's default of a page
// would not hold a 4096-byte backend identifier). Port 0: the kernel knows
// the sender's.
Result<NlMsgPtr> NewRequest(uint16_t family_id, uint32_t seq, uint8_t cmd, std::optional<uint32_t> index,
                            size_t more_attr_bytes) {
  const size_t index_bytes = index ? nla_total_size(sizeof(uint32_t)) : 0;
  NlMsgPtr msg(nlmsg_alloc_size(NLMSG_HDRLEN + GENL_HDRLEN + index_bytes + more_attr_bytes));
  // libnl fails a put only for want of memory or room, and the room is sized.
  if (!msg || !genlmsg_put(msg.get(), 0, seq, family_id, 0, NLM_F_REQUEST | NLM_F_ACK, cmd, NBD_GENL_VERSION) ||
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

// `bytes` copied into storage aligned for libnl, which reads headers and
// integers through typed pointers, while the bytes given may sit at any
// address (a fuzzer's input, the second message of a datagram).
class AlignedCopy {
 public:
  explicit AlignedCopy(std::span<const uint8_t> bytes) : words_((bytes.size() + 7) / 8) {
    if (!bytes.empty()) std::memcpy(words_.data(), bytes.data(), bytes.size());
  }
  nlmsghdr* hdr() { return reinterpret_cast<nlmsghdr*>(words_.data()); }
  size_t OffsetOf(const nlmsghdr* hdr) const {
    return reinterpret_cast<const uint8_t*>(hdr) - reinterpret_cast<const uint8_t*>(words_.data());
  }

 private:
  std::vector<uint64_t> words_;
};

// Copies one message after checking with libnl's nlmsg_ok and
// nlmsg_valid_hdr that its nlmsg_len fits the bytes given and covers a
// payload header of `payload_hdrlen` bytes.
Result<AlignedCopy> CopyMessage(std::span<const uint8_t> message, int payload_hdrlen, std::string_view what) {
  if (message.size() < NLMSG_HDRLEN) {
    return Status::Corruption(std::string(what) + ": " + std::to_string(message.size()) +
                              " byte(s), too short for a netlink header");
  }
  AlignedCopy copy(message);
  const nlmsghdr* hdr = copy.hdr();
  if (!nlmsg_ok(hdr, static_cast<int>(std::min<size_t>(message.size(), INT_MAX))) ||
      !nlmsg_valid_hdr(hdr, payload_hdrlen)) {
    return Status::Corruption(std::string(what) + ": nlmsg_len " + std::to_string(hdr->nlmsg_len) +
                              " does not fit the " + std::to_string(message.size()) +
                              " byte(s) received (headers need " + std::to_string(NLMSG_HDRLEN + payload_hdrlen) + ")");
  }
  return copy;
}

constexpr int kMaxType = NBD_ATTR_MAX;  // the largest of the levels below
using AttrTable = std::array<nlattr*, kMaxType + 1>;

// The attributes of one nesting level that a parser reads: libnl's policy
// and a name, indexed by type up to max_type. Integers get minlen ==
// maxlen (libnl checks no maximum unless told); nests have no length rule.
// Types without a name are skipped: newer kernels may add some.
struct AttrLevel {
  int max_type = 0;
  std::array<nla_policy, kMaxType + 1> policy{};
  std::array<std::string_view, kMaxType + 1> name{};
};

struct AttrRule {
  int type;
  std::string_view name;
  uint16_t nla_type;   // NLA_U32, NLA_U8, NLA_NESTED
  uint16_t exact_len;  // 0 for a nest
};

constexpr AttrLevel Level(int max_type, std::initializer_list<AttrRule> rules) {
  AttrLevel level;
  level.max_type = max_type;
  for (const AttrRule& rule : rules) {
    level.policy[rule.type] = {rule.nla_type, rule.exact_len, rule.exact_len};
    level.name[rule.type] = rule.name;
  }
  return level;
}

constexpr AttrLevel kStatusReply = Level(NBD_ATTR_MAX, {{NBD_ATTR_DEVICE_LIST, "NBD_ATTR_DEVICE_LIST", NLA_NESTED, 0}});
constexpr AttrLevel kDeviceItem = Level(
    NBD_DEVICE_ATTR_MAX,
    {{NBD_DEVICE_INDEX, "NBD_DEVICE_INDEX", NLA_U32, 4}, {NBD_DEVICE_CONNECTED, "NBD_DEVICE_CONNECTED", NLA_U8, 1}});
constexpr AttrLevel kLinkDead = Level(NBD_ATTR_MAX, {{NBD_ATTR_INDEX, "NBD_ATTR_INDEX", NLA_U32, 4}});

// nla_for_each_attr, and nla_parse which uses it, stop silently at an
// attribute whose header or nla_len does not fit the bytes left; after such
// a loop, rem > 0 means one did not, at `pos`. (rem < 0: the enclosing
// length cut off the last attribute's padding, which is harmless.)
Status CheckAllFit(const nlattr* pos, int rem, std::string_view where) {
  if (rem <= 0) return Status::Ok();
  if (rem < NLA_HDRLEN) {
    return Status::Corruption(std::string(where) + ": " + std::to_string(rem) +
                              " trailing byte(s), too short for an attribute header");
  }
  return Status::Corruption(std::string(where) + ": attribute type " + std::to_string(nla_type(pos)) + " has nla_len " +
                            std::to_string(pos->nla_len) + " but " + std::to_string(rem) + " byte(s) remain");
}

// Parses the attributes at `head` (`len` bytes) into `attrs` with libnl's
// nla_parse and `level`'s policy, after naming what nla_parse would not:
// the attribute that breaks the policy, one that appears twice (nla_parse
// keeps the last), one that does not fit.
Status ParseAttrs(nlattr* head, int len, const AttrLevel& level, std::string_view where, AttrTable& attrs) {
  std::bitset<kMaxType + 1> seen;
  nlattr* pos;
  int rem;
  nla_for_each_attr(pos, head, len, rem) {
    const int type = nla_type(pos);
    if (type > level.max_type || level.name[type].empty()) continue;
    const std::string name(level.name[type]);
    if (seen[type]) return Status::Corruption(std::string(where) + ": " + name + " appears twice");
    seen[type] = true;
    // This attribute alone through the policy, so that the error names it.
    if (nla_validate(pos, pos->nla_len, level.max_type, level.policy.data()) < 0) {
      const int want = level.policy[type].maxlen;
      return Status::Corruption(name + ": expected a " + std::to_string(want) + "-byte u" + std::to_string(8 * want) +
                                ", got " + std::to_string(nla_len(pos)) + " byte(s)");
    }
  }
  NBDK_RETURN_IF_ERROR(CheckAllFit(pos, rem, where));
  // Cannot fail: every attribute passed the same policy above.
  nla_parse(attrs.data(), level.max_type, head, len, level.policy.data());
  return Status::Ok();
}

// A generic-netlink message: its aligned copy and its top-level attributes,
// which point into the copy.
struct GenlMessage {
  AlignedCopy copy;
  AttrTable attrs{};
};

// Checks a message of `family_id` carrying `cmd` and parses its attributes.
Result<GenlMessage> ParseGenl(std::span<const uint8_t> message, uint16_t family_id, uint8_t cmd, const AttrLevel& level,
                              std::string_view what) {
  auto copy = CopyMessage(message, GENL_HDRLEN, what);
  if (!copy.ok()) return copy.status();
  GenlMessage parsed{std::move(*copy)};
  nlmsghdr* hdr = parsed.copy.hdr();
  if (hdr->nlmsg_type != family_id) {
    return Status::InvalidArgument(std::string(what) + ": message type " + std::to_string(hdr->nlmsg_type) +
                                   " is not the nbd family (" + std::to_string(family_id) + ")");
  }
  const genlmsghdr* genl = genlmsg_hdr(hdr);
  if (genl->cmd != cmd) {
    return Status::InvalidArgument(std::string(what) + ": genl command " + std::to_string(genl->cmd) + ", expected " +
                                   std::to_string(cmd));
  }
  NBDK_RETURN_IF_ERROR(ParseAttrs(genlmsg_attrdata(genl, 0), genlmsg_attrlen(genl, 0), level, what, parsed.attrs));
  return parsed;
}

// The device index in attribute `type` of `attrs`, which must be there.
Result<int> RequiredIndex(const AttrTable& attrs, int type, const AttrLevel& level, std::string_view where) {
  const std::string name(level.name[type]);
  if (!attrs[type]) return Status::Corruption(std::string(where) + " without " + name);
  const uint32_t index = nla_get_u32(attrs[type]);
  if (index > static_cast<uint32_t>(INT_MAX)) {
    return Status::Corruption(name + ": device index " + std::to_string(index) + " out of range");
  }
  return static_cast<int>(index);
}

Result<NbdDeviceStatus> ParseDeviceItem(nlattr* item) {
  constexpr std::string_view kWhat = "NBD_DEVICE_ITEM";
  AttrTable attrs{};
  NBDK_RETURN_IF_ERROR(ParseAttrs(static_cast<nlattr*>(nla_data(item)), nla_len(item), kDeviceItem, kWhat, attrs));
  auto index = RequiredIndex(attrs, NBD_DEVICE_INDEX, kDeviceItem, kWhat);
  if (!index.ok()) return index.status();
  if (!attrs[NBD_DEVICE_CONNECTED]) {
    return Status::Corruption("NBD_DEVICE_ITEM for nbd" + std::to_string(*index) + " without NBD_DEVICE_CONNECTED");
  }
  return NbdDeviceStatus{*index, nla_get_u8(attrs[NBD_DEVICE_CONNECTED]) != 0};
}

}  // namespace

Result<std::vector<uint8_t>> BuildStatusRequest(uint16_t family_id, uint32_t seq, std::optional<uint32_t> index) {
  return BuildRequest(family_id, seq, NBD_CMD_STATUS, index);
}

Result<std::vector<uint8_t>> BuildDisconnectRequest(uint16_t family_id, uint32_t seq, uint32_t index) {
  return BuildRequest(family_id, seq, NBD_CMD_DISCONNECT, index);
}

Result<std::vector<uint8_t>> BuildResizeRequest(uint16_t family_id, uint32_t seq, uint32_t index, uint64_t size_bytes,
                                                std::string_view backend) {
  constexpr size_t kMaxBackend = 4096;
  if (backend.size() > kMaxBackend) {
    return Status::InvalidArgument("nbd backend identifier of " + std::to_string(backend.size()) + " bytes is over " +
                                   std::to_string(kMaxBackend));
  }
  if (backend.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument("nbd backend identifier holds a NUL byte");
  }
  const std::string terminated(backend);  // nla_put_string sends its NUL too
  const size_t backend_bytes = backend.empty() ? 0 : nla_total_size(backend.size() + 1);
  auto msg = NewRequest(family_id, seq, NBD_CMD_RECONFIGURE, index, nla_total_size(sizeof(uint64_t)) + backend_bytes);
  if (!msg.ok()) return msg.status();
  if (nla_put_u64(msg->get(), NBD_ATTR_SIZE_BYTES, size_bytes) < 0 ||
      (!backend.empty() && nla_put_string(msg->get(), NBD_ATTR_BACKEND_IDENTIFIER, terminated.c_str()) < 0)) {
    return Status::ResourceExhausted("build an nbd RECONFIGURE request: out of memory");
  }
  return NlMsgBytes(msg->get());
}

Result<std::vector<NetlinkMessage>> SplitNetlinkDatagram(std::span<const uint8_t> datagram) {
  if (datagram.size() > INT_MAX) {  // libnl counts the bytes left in an int
    return Status::Corruption("netlink datagram of " + std::to_string(datagram.size()) + " bytes is over INT_MAX");
  }
  AlignedCopy copy(datagram);
  std::vector<NetlinkMessage> out;
  nlmsghdr* hdr = copy.hdr();
  int rem = static_cast<int>(datagram.size());
  for (; nlmsg_ok(hdr, rem); hdr = nlmsg_next(hdr, &rem)) {
    out.push_back({hdr->nlmsg_type, hdr->nlmsg_flags, hdr->nlmsg_seq, hdr->nlmsg_pid,
                   datagram.subspan(copy.OffsetOf(hdr), hdr->nlmsg_len)});
  }
  // As with attributes, rem < 0 means the last message's padding was cut.
  if (rem > 0 && rem < static_cast<int>(NLMSG_HDRLEN)) {
    return Status::Corruption("netlink datagram: " + std::to_string(rem) +
                              " trailing byte(s), too short for a netlink header");
  }
  if (rem > 0) {
    return Status::Corruption("netlink datagram: nlmsg_len " + std::to_string(hdr->nlmsg_len) + " but " +
                              std::to_string(rem) + " byte(s) remain");
  }
  return out;
}

Status ParseNetlinkAck(std::span<const uint8_t> message, std::string_view what) {
  auto copy = CopyMessage(message, sizeof(int), std::string(what) + ": netlink error message");
  if (!copy.ok()) return copy.status();
  nlmsghdr* hdr = copy->hdr();
  if (hdr->nlmsg_type != NLMSG_ERROR) {
    return Status::InvalidArgument(std::string(what) + ": message type " + std::to_string(hdr->nlmsg_type) +
                                   " is not NLMSG_ERROR");
  }
  // Only the error code is required: the echoed request may be capped.
  const int error = static_cast<const nlmsgerr*>(nlmsg_data(hdr))->error;
  if (error == 0) return Status::Ok();
  if (error > 0 || error == INT_MIN) {
    return Status::Corruption(std::string(what) + ": netlink error code " + std::to_string(error) +
                              " is not a negative errno");
  }
  return Status::FromErrno(-error, what);
}

Result<std::vector<NbdDeviceStatus>> ParseStatusReply(std::span<const uint8_t> message, uint16_t family_id) {
  constexpr std::string_view kWhat = "nbd STATUS reply";
  auto reply = ParseGenl(message, family_id, NBD_CMD_STATUS, kStatusReply, kWhat);
  if (!reply.ok()) return reply.status();
  nlattr* list = reply->attrs[NBD_ATTR_DEVICE_LIST];
  if (!list) return Status::Corruption("nbd STATUS reply has no NBD_ATTR_DEVICE_LIST");
  std::vector<NbdDeviceStatus> devices;
  nlattr* item;
  int rem;
  nla_for_each_nested(item, list, rem) {
    if (nla_type(item) != NBD_DEVICE_ITEM) continue;
    auto device = ParseDeviceItem(item);
    if (!device.ok()) return device.status();
    for (const NbdDeviceStatus& seen : devices) {
      if (seen.index == device->index) {
        return Status::Corruption("NBD_ATTR_DEVICE_LIST: nbd" + std::to_string(seen.index) + " listed twice");
      }
    }
    devices.push_back(*device);
  }
  NBDK_RETURN_IF_ERROR(CheckAllFit(item, rem, "NBD_ATTR_DEVICE_LIST"));
  return devices;
}

Result<int> ParseLinkDead(std::span<const uint8_t> message, uint16_t family_id) {
  constexpr std::string_view kWhat = "nbd LINK_DEAD";
  auto link_dead = ParseGenl(message, family_id, NBD_CMD_LINK_DEAD, kLinkDead, kWhat);
  if (!link_dead.ok()) return link_dead.status();
  return RequiredIndex(link_dead->attrs, NBD_ATTR_INDEX, kLinkDead, kWhat);
}

}  // namespace nbdk
