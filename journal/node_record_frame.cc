#include "journal/node_record_frame.h"

#include <cstdio>

#include "journal/node_crc32c.h"

namespace nbdk {
namespace {

constexpr std::string_view kMagic = "NBKJ";

void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint32_t GetU32(std::string_view bytes, size_t offset) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<unsigned char>(bytes[offset + i])} << (8 * i);
  return v;
}

std::string Hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

}  // namespace

std::string EncodeRecordFrame(std::string_view payload) {
  std::string out(kMagic);
  PutU32(&out, kRecordFrameVersion);
  PutU32(&out, static_cast<uint32_t>(payload.size()));
  uint32_t crc = Crc32cExtend(Crc32c(std::string_view(out).substr(4, 8)), payload);
  PutU32(&out, crc);
  out.append(payload);
  return out;
}

Result<std::string_view> DecodeRecordFrame(std::string_view file) {
  if (file.empty()) return Status::Corruption("empty file (0 bytes)");
  if (file.size() < kRecordFrameHeaderSize) {
    return Status::Corruption("truncated header: " + std::to_string(file.size()) + " of " +
                              std::to_string(kRecordFrameHeaderSize) + " bytes");
  }
  if (file.substr(0, 4) != kMagic) return Status::Corruption("bad magic " + Hex32(GetU32(file, 0)));
  uint32_t version = GetU32(file, 4);
  if (version != kRecordFrameVersion) {
    return Status::Corruption("unsupported format version " + std::to_string(version));
  }
  uint32_t length = GetU32(file, 8);
  if (length > kMaxRecordPayload) {
    return Status::Corruption("payload length " + std::to_string(length) + " exceeds the limit " +
                              std::to_string(kMaxRecordPayload));
  }
  size_t have = file.size() - kRecordFrameHeaderSize;
  if (have < length) {
    return Status::Corruption("truncated payload: " + std::to_string(have) + " of " + std::to_string(length) +
                              " bytes");
  }
  if (have > length) {
    return Status::Corruption(std::to_string(have - length) + " trailing bytes after the payload");
  }
  std::string_view payload = file.substr(kRecordFrameHeaderSize);
  uint32_t stored = GetU32(file, 12);
  uint32_t computed = Crc32cExtend(Crc32c(file.substr(4, 8)), payload);
  if (stored != computed) {
    return Status::Corruption("checksum mismatch: stored " + Hex32(stored) + ", computed " + Hex32(computed));
  }
  return payload;
}

}  // namespace nbdk
