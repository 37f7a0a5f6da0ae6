// Pure encoding and decoding of nbd generic-netlink messages: no sockets, so
// every byte layout the kernel could send is unit-testable.
//
// A "message" is one complete netlink message: nlmsghdr, genlmsghdr, then
// attributes, with the numbers of <linux/nbd-netlink.h>, built and read with
// libnl (genlmsg_put, nla_put_*, nla_parse with a policy per nesting level).
// Parsers trust no length field: every nlmsg_len and nla_len is checked
// against the bytes actually given, and input may sit at any address.
// Malformed or truncated input returns Corruption naming what is wrong; a
// well-formed message of the wrong kind (another family or command) returns
// InvalidArgument. Nothing here crashes on bad input.
//
// Thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace nbdk {

// One entry of an NBD_CMD_STATUS reply.
struct NbdDeviceStatus {
  int index = -1;  // /dev/nbd<index>
  // The kernel's NBD_DEVICE_CONNECTED: the device holds a configuration
  // (config_refs > 0). It stays true while a dead connection waits for a
  // re-attach (dead_conn_timeout): it does not mean a process is serving IO.
  bool connected = false;

  bool operator==(const NbdDeviceStatus&) const = default;
};

// Request builders. Each returns one complete NLM_F_REQUEST | NLM_F_ACK
// message for the nbd family `family_id` with sequence number `seq` and
// nlmsg_pid 0 (the kernel knows the sender's port), or ResourceExhausted
// when libnl cannot allocate it.
//
// STATUS for one device, or for all devices when `index` is empty.
Result<std::vector<uint8_t>> BuildStatusRequest(uint16_t family_id, uint32_t seq, std::optional<uint32_t> index);
// DISCONNECT of /dev/nbd<index>.
Result<std::vector<uint8_t>> BuildDisconnectRequest(uint16_t family_id, uint32_t seq, uint32_t index);
// RECONFIGURE of /dev/nbd<index> to `size_bytes` (NBD_ATTR_SIZE_BYTES, u64;
// the block size is left as it is). `backend` is the device's backend
// identifier (/sys/block/nbd<index>/backend), sent NUL-terminated as
// NBD_ATTR_BACKEND_IDENTIFIER: the kernel refuses to reconfigure a device
// connected with an identifier unless the request carries the same one
// (nbd_genl_reconfigure: "must specify backend", EINVAL). Empty: the
// attribute is left out, for a device connected without one.
// InvalidArgument for a backend that holds a NUL or is over 4096 bytes.
Result<std::vector<uint8_t>> BuildResizeRequest(uint16_t family_id, uint32_t seq, uint32_t index, uint64_t size_bytes,
                                                std::string_view backend);

// The header fields of one netlink message inside a datagram, plus a view of
// its bytes (header included, exactly nlmsg_len long; valid as long as the
// datagram is).
struct NetlinkMessage {
  uint16_t type = 0;
  uint16_t flags = 0;
  uint32_t seq = 0;
  uint32_t port = 0;
  std::span<const uint8_t> bytes;
};

// Splits one received datagram into its messages, checking every nlmsg_len
// (a kernel datagram may carry several messages, each 4-byte aligned).
Result<std::vector<NetlinkMessage>> SplitNetlinkDatagram(std::span<const uint8_t> datagram);

// Reads an NLMSG_ERROR message: OK for an ack (error 0); otherwise the
// kernel's errno as a Status whose message starts with `what`.
Status ParseNetlinkAck(std::span<const uint8_t> message, std::string_view what);

// Parses an NBD_CMD_STATUS reply of family `family_id` into its devices, in
// the kernel's order. An empty NBD_ATTR_DEVICE_LIST gives an empty vector.
Result<std::vector<NbdDeviceStatus>> ParseStatusReply(std::span<const uint8_t> message, uint16_t family_id);

// Parses an NBD_CMD_LINK_DEAD multicast of family `family_id`: the index of
// the device whose connection died.
Result<int> ParseLinkDead(std::span<const uint8_t> message, uint16_t family_id);

}  // namespace nbdk
