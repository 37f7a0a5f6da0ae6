// The on-disk frame of one journal record file:
//
//   offset  size  field
//        0     4  magic "NBKJ"
//        4     4  format version, little-endian (kRecordFrameVersion)
//        8     4  payload length N, little-endian (at most kMaxRecordPayload)
//       12     4  CRC-32C of bytes 4..11 and the payload, little-endian
//       16     N  payload (the JSON of one VolumeRecord)
//
// The file holds exactly one frame: a short file, a longer one, a wrong magic
// or version, or a checksum mismatch is corruption. The length prefix makes a
// truncated payload detectable even when the truncated bytes happen to parse.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace nbdk {

inline constexpr uint32_t kRecordFrameVersion = 1;
inline constexpr size_t kRecordFrameHeaderSize = 16;
inline constexpr uint32_t kMaxRecordPayload = 1 << 20;

// The frame bytes for `payload`. Precondition: payload.size() <= kMaxRecordPayload.
std::string EncodeRecordFrame(std::string_view payload);

// The payload inside `file` (a view into it), or Corruption saying what is
// wrong ("checksum mismatch: stored 0x..., computed 0x..."); the caller adds
// the file name.
Result<std::string_view> DecodeRecordFrame(std::string_view file);

}  // namespace nbdk
