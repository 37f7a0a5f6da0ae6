#include "journal/volume_id.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "base/quote_field.h"

namespace nbdk {
namespace {

constexpr size_t kUuidLength = 36;

Status Invalid(std::string what) { return Status::InvalidArgument("volume_id: " + std::move(what)); }

std::optional<uint64_t> ParseHex(std::string_view text) {
  uint64_t v = 0;
  for (char c : text) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  return v;
}

std::string Hex(uint64_t v, int digits) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out(static_cast<size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i, v >>= 4) out[static_cast<size_t>(i)] = kDigits[v & 15];
  return out;
}

bool IsCanonicalUuid(std::string_view u) {
  if (u.size() != kUuidLength) return false;
  for (size_t i = 0; i < u.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? u[i] != '-' : !std::isxdigit(static_cast<unsigned char>(u[i]))) return false;
  }
  return true;
}

bool IsIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

Status ExpectDash(std::string_view id, size_t at, std::string_view after) {
  if (id[at] == '-') return Status::Ok();
  return Invalid("expected '-' after the " + std::string(after) + " at offset " + std::to_string(at) + ", found " +
                 QuoteField(id.substr(at, 1)));
}

}  // namespace

Status ValidateVolumeId(std::string_view id) {
  if (id.empty()) return Status::InvalidArgument("volume_id: missing");
  if (id.size() > kMaxVolumeIdLength) {
    return Status::InvalidArgument("volume_id: " + std::to_string(id.size()) + " bytes, longer than 128");
  }
  if (id.front() == '.' || id.front() == '-') {
    return Status::InvalidArgument("volume_id " + QuoteField(id) + ": starts with '" + id.front() + "'");
  }
  if (!std::all_of(id.begin(), id.end(), IsIdChar)) {
    return Status::InvalidArgument("volume_id " + QuoteField(id) + ": only [A-Za-z0-9._-] allowed");
  }
  return Status::Ok();
}

Result<VolumeId> DecodeVolumeId(std::string_view id) {
  if (id.size() > kMaxVolumeIdLength) {
    return Invalid(std::to_string(id.size()) + " bytes, longer than the CSI limit of 128");
  }
  if (id.size() < kVolumeIdFixedLength) {
    return Invalid(std::to_string(id.size()) + " bytes, shorter than the 64 of any encoded ID");
  }
  VolumeId out;

  std::string_view version = id.substr(0, 4);
  auto v = ParseHex(version);
  if (!v) return Invalid("encoding version field " + QuoteField(version) + " is not hex");
  if (*v != 1) return Invalid("encoding version " + std::string(version) + " is not supported (only 0001)");
  out.encoding_version = static_cast<uint16_t>(*v);
  NBDK_RETURN_IF_ERROR(ExpectDash(id, 4, "encoding version"));

  std::string_view length_field = id.substr(5, 4);
  auto length = ParseHex(length_field);
  if (!length) return Invalid("cluster ID length field " + QuoteField(length_field) + " is not hex");
  if (*length == 0) return Invalid("cluster ID length field '0000': the cluster ID is empty");
  // Room for the cluster ID, the pool ID and their separators; a short UUID
  // is reported below, as the UUID.
  if (10 + *length + 18 > id.size()) {
    return Invalid("cluster ID length field " + QuoteField(length_field) + " (" + std::to_string(*length) +
                   ") is larger than the rest of the ID");
  }
  NBDK_RETURN_IF_ERROR(ExpectDash(id, 9, "cluster ID length"));
  size_t at = 10;
  out.cluster_id = std::string(id.substr(at, *length));
  at += *length;
  NBDK_RETURN_IF_ERROR(ExpectDash(id, at, "cluster ID"));
  ++at;

  std::string_view pool = id.substr(at, 16);
  auto pool_id = ParseHex(pool);
  if (!pool_id) return Invalid("pool ID field " + QuoteField(pool) + " is not hex");
  out.pool_id = static_cast<int64_t>(*pool_id);
  at += 16;
  NBDK_RETURN_IF_ERROR(ExpectDash(id, at, "pool ID"));
  ++at;

  std::string_view uuid = id.substr(at);
  if (uuid.size() != kUuidLength) {
    return Invalid("object UUID has " + std::to_string(uuid.size()) + " characters, expected 36");
  }
  if (!IsCanonicalUuid(uuid)) return Invalid("object UUID " + QuoteField(uuid) + " is not 8-4-4-4-12 hex digits");
  out.object_uuid = std::string(uuid);
  return out;
}

std::string EncodeVolumeId(const VolumeId& id) {
  return Hex(id.encoding_version, 4) + "-" + Hex(id.cluster_id.size(), 4) + "-" + id.cluster_id + "-" +
         Hex(static_cast<uint64_t>(id.pool_id), 16) + "-" + id.object_uuid;
}

}  // namespace nbdk
