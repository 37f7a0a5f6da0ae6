#include "journal/omap_volume_journal.h"

#include <cstdio>
#include <random>

#include "journal/omap_volume_keys.h"

namespace nbdk {
namespace {

constexpr int kReserveTries = 5;

}  // namespace

VolumeJournal::VolumeJournal(OmapStore& directory, OmapStore& volumes, VolumeJournalPools pools,
                             std::string instance, std::function<std::string()> new_uuid)
    : directory_(directory),
      volumes_(volumes),
      pools_(pools),
      directory_object_(DirectoryObject(instance)),
      new_uuid_(std::move(new_uuid)) {}

Result<std::optional<VolumeReservation>> VolumeJournal::Lookup(const std::string& request_name) {
  const std::string key = DirectoryKey(request_name);
  auto dir = directory_.Get(directory_object_, {key});
  if (!dir.ok() && dir.status().code() == Code::kNotFound) return std::optional<VolumeReservation>();
  if (!dir.ok()) return dir.status();
  auto it = dir->find(key);
  if (it == dir->end()) return std::optional<VolumeReservation>();
  auto value = ParseDirectoryValue(it->second);
  if (!value.ok()) return value.status().WithContext("request " + request_name);
  int64_t image_pool = value->image_pool_id.value_or(pools_.journal_pool_id);
  if (image_pool != pools_.image_pool_id) {
    return Status::AlreadyExists("request name " + request_name + " is reserved for an image in pool id " +
                                 std::to_string(image_pool));
  }

  const std::string object = VolumeObject(value->uuid);
  auto attrs = volumes_.Get(object, {kVolNameKey, kImageNameKey});
  bool missing = !attrs.ok() && attrs.status().code() == Code::kNotFound;
  if (!attrs.ok() && !missing) return attrs.status();
  if (!missing) {
    auto name = attrs->find(kVolNameKey);
    if (name != attrs->end() && name->second == request_name) {
      auto image = attrs->find(kImageNameKey);
      return std::optional<VolumeReservation>(VolumeReservation{
          value->uuid, image == attrs->end() ? DefaultImageName(value->uuid) : image->second});
    }
    // No back pointer: our own reservation that stopped before its keys were
    // filled; nothing else can own it. Another name: not ours to remove.
    if (name == attrs->end()) NBDK_RETURN_IF_ERROR(volumes_.RemoveObject(object));
  }
  NBDK_RETURN_IF_ERROR(directory_.RemoveKeys(directory_object_, {key}));
  return std::optional<VolumeReservation>();
}

Result<VolumeReservation> VolumeJournal::Reserve(const std::string& request_name, const std::string& image_name) {
  std::string uuid;
  for (int attempt = 0;; ++attempt) {
    uuid = new_uuid_();
    Status created = volumes_.CreateExclusive(VolumeObject(uuid));
    if (created.ok()) break;
    if (created.code() != Code::kAlreadyExists || attempt + 1 == kReserveTries) {
      return created.WithContext("reserve request " + request_name);
    }
  }
  const std::string object = VolumeObject(uuid);
  DirectoryValue value{std::nullopt, uuid};
  if (pools_.image_pool_id != pools_.journal_pool_id) value.image_pool_id = pools_.image_pool_id;
  Status dir = directory_.Set(directory_object_, {{DirectoryKey(request_name), FormatDirectoryValue(value)}});
  if (!dir.ok()) {
    (void)volumes_.RemoveObject(object);
    return dir.WithContext("reserve request " + request_name);
  }
  VolumeReservation out{uuid, image_name.empty() ? DefaultImageName(uuid) : image_name};
  OmapValues attrs = {{kVolNameKey, request_name}, {kImageNameKey, out.image_name}};
  if (pools_.image_pool_id != pools_.journal_pool_id) attrs[kJournalPoolKey] = PoolIdHex(pools_.journal_pool_id);
  Status filled = volumes_.Set(object, attrs);
  if (!filled.ok()) {
    (void)Undo(request_name, uuid);
    return filled.WithContext("reserve request " + request_name);
  }
  return out;
}

Status VolumeJournal::Undo(const std::string& request_name, const std::string& uuid) {
  NBDK_RETURN_IF_ERROR(volumes_.RemoveObject(VolumeObject(uuid)));
  const std::string key = DirectoryKey(request_name);
  auto dir = directory_.Get(directory_object_, {key});
  if (!dir.ok()) return dir.status().code() == Code::kNotFound ? Status::Ok() : dir.status();
  auto it = dir->find(key);
  if (it == dir->end()) return Status::Ok();
  // Only our own key: after a stale cleanup the name may point elsewhere.
  auto value = ParseDirectoryValue(it->second);
  if (!value.ok() || value->uuid != uuid) return Status::Ok();
  return directory_.RemoveKeys(directory_object_, {key});
}

Result<std::optional<VolumeAttributes>> ReadVolumeAttributes(OmapStore& volumes, const std::string& uuid) {
  auto attrs = volumes.Get(VolumeObject(uuid), {kVolNameKey, kImageNameKey, kJournalPoolKey});
  if (!attrs.ok() && attrs.status().code() == Code::kNotFound) return std::optional<VolumeAttributes>();
  if (!attrs.ok()) return attrs.status();
  VolumeAttributes out;
  if (auto it = attrs->find(kVolNameKey); it != attrs->end()) out.request_name = it->second;
  auto image = attrs->find(kImageNameKey);
  out.image_name = image == attrs->end() ? DefaultImageName(uuid) : image->second;
  if (auto it = attrs->find(kJournalPoolKey); it != attrs->end()) {
    auto id = ParsePoolIdHex(it->second);
    if (!id.ok()) return Status::Corruption(VolumeObject(uuid) + ": csi.journalpool: " + id.status().message());
    out.journal_pool_id = *id;
  }
  return std::optional<VolumeAttributes>(std::move(out));
}

std::string RandomUuid() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  uint64_t hi = rng(), lo = rng();
  hi = (hi & ~0xf000ULL) | 0x4000ULL;                   // version 4
  lo = (lo & ~(3ULL << 62)) | (2ULL << 62);             // RFC 4122 variant
  char buf[37];
  std::snprintf(buf, sizeof buf, "%08llx-%04llx-%04llx-%04llx-%012llx", (unsigned long long)(hi >> 32),
                (unsigned long long)((hi >> 16) & 0xffff), (unsigned long long)(hi & 0xffff),
                (unsigned long long)(lo >> 48), (unsigned long long)(lo & 0xffffffffffffULL));
  return buf;
}

}  // namespace nbdk
