#include "journal/node_record_file_name.h"

#include "journal/volume_id.h"

namespace nbdk {
namespace {

constexpr size_t kMaxEscapedBody = 180;

bool IsKept(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

std::string Escape(std::string_view id) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : id) {
    if (IsKept(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('_');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string Base64Url(std::string_view id) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  uint32_t bits = 0;
  int nbits = 0;
  for (unsigned char c : id) {
    bits = (bits << 8) | c;
    nbits += 8;
    while (nbits >= 6) {
      nbits -= 6;
      out.push_back(kAlphabet[(bits >> nbits) & 63]);
    }
  }
  if (nbits > 0) out.push_back(kAlphabet[(bits << (6 - nbits)) & 63]);
  return out;
}

}  // namespace

Result<std::string> RecordFileName(std::string_view volume_id) {
  NBDK_RETURN_IF_ERROR(ValidateVolumeId(volume_id));
  std::string body = Escape(volume_id);
  if (body.size() <= kMaxEscapedBody) return "v." + body + std::string(kRecordFileSuffix);
  return "b." + Base64Url(volume_id) + std::string(kRecordFileSuffix);
}

bool IsRecordFileName(std::string_view name) {
  return name.size() > 2 + kRecordFileSuffix.size() && (name.starts_with("v.") || name.starts_with("b.")) &&
         name.ends_with(kRecordFileSuffix);
}

}  // namespace nbdk
