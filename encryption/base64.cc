#include "encryption/base64.h"

#include <array>

namespace nbdk {
namespace {

constexpr std::string_view kStandard = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view kUrl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// Character -> its 6 bits in the standard alphabet, -1 for any other byte.
constexpr std::array<int8_t, 256> StandardValues() {
  std::array<int8_t, 256> values{};
  for (int8_t& v : values) v = -1;
  for (size_t i = 0; i < kStandard.size(); ++i) values[static_cast<uint8_t>(kStandard[i])] = static_cast<int8_t>(i);
  return values;
}

}  // namespace

void EncodeBase64To(std::span<const uint8_t> in, Base64Alphabet alphabet, char* out) {
  std::string_view chars = alphabet == Base64Alphabet::kStandard ? kStandard : kUrl;
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    uint32_t group = uint32_t{in[i]} << 16 | uint32_t{in[i + 1]} << 8 | in[i + 2];
    *out++ = chars[group >> 18];
    *out++ = chars[group >> 12 & 63];
    *out++ = chars[group >> 6 & 63];
    *out++ = chars[group & 63];
  }
  size_t rest = in.size() - i;
  if (rest == 0) return;
  uint32_t group = uint32_t{in[i]} << 16 | (rest == 2 ? uint32_t{in[i + 1]} << 8 : 0);
  *out++ = chars[group >> 18];
  *out++ = chars[group >> 12 & 63];
  *out++ = rest == 2 ? chars[group >> 6 & 63] : '=';
  *out++ = '=';
}

std::string EncodeBase64(std::span<const uint8_t> in, Base64Alphabet alphabet) {
  std::string out(Base64EncodedLength(in.size()), '\0');
  EncodeBase64To(in, alphabet, out.data());
  return out;
}

Result<std::string> DecodeBase64Standard(std::string_view text) {
  static constexpr std::array<int8_t, 256> kValues = StandardValues();
  if (text.size() % 4 != 0) {
    return Status::InvalidArgument("base64 of " + std::to_string(text.size()) + " characters, not a multiple of 4");
  }
  size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text.size() >= 2 && text[text.size() - 2] == '=' ? 2 : 1;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t group = 0;
  for (size_t i = 0; i < text.size() - padding; ++i) {
    int8_t value = kValues[static_cast<uint8_t>(text[i])];
    if (value < 0) return Status::InvalidArgument("not base64 at offset " + std::to_string(i));
    group = group << 6 | static_cast<uint32_t>(value);
    if (i % 4 == 3) {
      out.push_back(static_cast<char>(group >> 16));
      out.push_back(static_cast<char>(group >> 8));
      out.push_back(static_cast<char>(group));
      group = 0;
    }
  }
  if (padding == 2) {  // 2 characters: 12 bits, 1 byte
    if (group & 0xf) return Status::InvalidArgument("base64 with unused bits set before its padding");
    out.push_back(static_cast<char>(group >> 4));
  } else if (padding == 1) {  // 3 characters: 18 bits, 2 bytes
    if (group & 0x3) return Status::InvalidArgument("base64 with unused bits set before its padding");
    out.push_back(static_cast<char>(group >> 10));
    out.push_back(static_cast<char>(group >> 2));
  }
  return out;
}

}  // namespace nbdk
