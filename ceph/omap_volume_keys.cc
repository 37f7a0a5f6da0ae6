#include "ceph/omap_volume_keys.h"

#include <cstdio>

namespace nbdk {
namespace {

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

}  // namespace

std::string DirectoryObject(const JournalNames& names, std::string_view instance) {
  return names.directory_prefix + std::string(instance);
}
std::string DirectoryKey(const JournalNames& names, std::string_view request_name) {
  return names.key_prefix + std::string(request_name);
}
std::string JournalObject(const JournalNames& names, std::string_view uuid) {
  return names.key_prefix + std::string(uuid);
}
std::string DefaultImageName(const JournalNames& names, std::string_view uuid) {
  return names.image_prefix + std::string(uuid);
}

std::string DirectoryObject(std::string_view instance) { return DirectoryObject(kVolumeJournalNames, instance); }
std::string DirectoryKey(std::string_view request_name) { return DirectoryKey(kVolumeJournalNames, request_name); }
std::string VolumeObject(std::string_view uuid) { return JournalObject(kVolumeJournalNames, uuid); }
std::string DefaultImageName(std::string_view uuid) { return DefaultImageName(kVolumeJournalNames, uuid); }

std::string PoolIdHex(int64_t pool_id) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(static_cast<uint64_t>(pool_id)));
  return buf;
}

Result<int64_t> ParsePoolIdHex(std::string_view hex) {
  if (hex.size() != 16) return Status::InvalidArgument("pool id '" + std::string(hex) + "' is not 16 hex digits");
  uint64_t v = 0;
  for (char c : hex) {
    if (!IsHex(c)) return Status::InvalidArgument("pool id '" + std::string(hex) + "' is not hex");
    v = v << 4 | static_cast<uint64_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
  }
  return static_cast<int64_t>(v);
}

bool IsCanonicalUuid(std::string_view uuid) {
  if (uuid.size() != 36) return false;
  for (size_t i = 0; i < uuid.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? uuid[i] != '-' : !IsHex(uuid[i])) return false;
  }
  return true;
}

std::string FormatDirectoryValue(const DirectoryValue& value) {
  if (!value.image_pool_id) return value.uuid;
  return PoolIdHex(*value.image_pool_id) + "/" + value.uuid;
}

Result<DirectoryValue> ParseDirectoryValue(std::string_view value) {
  DirectoryValue out;
  std::string_view uuid = value;
  if (size_t slash = value.find('/'); slash != std::string_view::npos) {
    auto pool = ParsePoolIdHex(value.substr(0, slash));
    if (!pool.ok())
      return Status::Corruption("directory value '" + std::string(value) + "': " + pool.status().message());
    out.image_pool_id = *pool;
    uuid = value.substr(slash + 1);
  }
  if (!IsCanonicalUuid(uuid)) {
    return Status::Corruption("directory value '" + std::string(value) + "': '" + std::string(uuid) +
                              "' is not a canonical uuid");
  }
  out.uuid = std::string(uuid);
  return out;
}

}  // namespace nbdk
