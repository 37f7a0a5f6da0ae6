// CRC-32C (Castagnoli), the checksum of journal record frames - the same
// polynomial LevelDB's log uses, chosen for its burst-error detection.
#pragma once

#include <cstdint>
#include <string_view>

namespace nbdk {

// Extends `crc` (the CRC of the bytes before `data`; 0 to start) by `data`.
uint32_t Crc32cExtend(uint32_t crc, std::string_view data);
inline uint32_t Crc32c(std::string_view data) { return Crc32cExtend(0, data); }

}  // namespace nbdk
