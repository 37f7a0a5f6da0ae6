// Datagrams from the kernel's nbd generic-netlink family
// (netlink/nbd_genl_message.h): split into messages, each read as an ack,
// a STATUS reply and a LINK_DEAD multicast, as the socket code may.
#include <span>

#include "netlink/nbd_genl_message.h"
#include "test/fuzz/fuzz_input.h"

namespace {
constexpr uint16_t kNbdFamily = 0x1a;  // the family ID of the seed corpus
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> datagram(data, size);
  auto messages = nbdk::SplitNetlinkDatagram(datagram);
  if (!messages.ok()) return 0;
  for (const nbdk::NetlinkMessage& message : *messages) {
    NBDK_FUZZ_CHECK(message.bytes.data() >= data && message.bytes.data() + message.bytes.size() <= data + size);
    (void)nbdk::ParseNetlinkAck(message.bytes, "fuzz");
    (void)nbdk::ParseStatusReply(message.bytes, kNbdFamily);
    (void)nbdk::ParseLinkDead(message.bytes, kNbdFamily);
  }
  return 0;
}
