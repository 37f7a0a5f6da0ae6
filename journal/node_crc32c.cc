#include "journal/node_crc32c.h"

#include <array>

namespace nbdk {
namespace {

// Byte-at-a-time table for the reflected polynomial 0x82F63B78. Records are a
// few KiB written a few times a minute, so speed does not matter.
constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = MakeTable();

}  // namespace

uint32_t Crc32cExtend(uint32_t crc, std::string_view data) {
  uint32_t c = ~crc;
  for (unsigned char byte : data) c = kTable[(c ^ byte) & 0xFF] ^ (c >> 8);
  return ~c;
}

}  // namespace nbdk
