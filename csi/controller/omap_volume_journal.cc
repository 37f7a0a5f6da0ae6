#include "csi/controller/omap_volume_journal.h"

#include <cstdio>
#include <random>

#include "ceph/omap_volume_keys.h"

namespace nbdk {
namespace {

constexpr int kReserveTries = 5;

}  // namespace

VolumeJournal::VolumeJournal(OmapStore& directory, OmapStore& volumes, VolumeJournalPools pools, std::string instance,
                             std::function<std::string()> new_uuid, const JournalNames& names)
    : names_(names),
      directory_(directory),
      volumes_(volumes),
      pools_(pools),
      directory_object_(DirectoryObject(names, instance)),
      new_uuid_(std::move(new_uuid)) {}

Result<std::optional<VolumeReservation>> VolumeJournal::Lookup(const std::string& request_name,
                                                               const std::string& source) {
  const std::string key = DirectoryKey(names_, request_name);
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

  const std::string object = JournalObject(names_, value->uuid);
  auto attrs = ReadVolumeAttributes(volumes_, value->uuid, names_);
  if (!attrs.ok()) return attrs.status();
  if (*attrs && (*attrs)->request_name == request_name) {
    if (names_.has_source && (*attrs)->source != source) {
      return Status::AlreadyExists("snapshot name " + request_name + " is taken by a snapshot of image " +
                                   (*attrs)->source + ", not of " + source);
    }
    return std::optional<VolumeReservation>(
        VolumeReservation{value->uuid, (*attrs)->image_name, (*attrs)->source, (*attrs)->encryption});
  }
  // No back pointer: our own reservation that stopped before its keys were
  // filled; nothing else can own it. Another name: not ours to remove.
  if (*attrs && (*attrs)->request_name.empty()) NBDK_RETURN_IF_ERROR(volumes_.RemoveObject(object));
  NBDK_RETURN_IF_ERROR(directory_.RemoveKeys(directory_object_, {key}));
  return std::optional<VolumeReservation>();
}

Result<VolumeReservation> VolumeJournal::Reserve(const std::string& request_name, const std::string& image_name,
                                                 const std::string& source, const std::string& name_prefix,
                                                 const JournalEncryption& encryption) {
  std::string uuid;
  for (int attempt = 0;; ++attempt) {
    uuid = new_uuid_();
    Status created = volumes_.CreateExclusive(JournalObject(names_, uuid));
    if (created.ok()) break;
    if (created.code() != Code::kAlreadyExists || attempt + 1 == kReserveTries) {
      return created.WithContext("reserve request " + request_name);
    }
  }
  const std::string object = JournalObject(names_, uuid);
  DirectoryValue value{std::nullopt, uuid};
  if (pools_.image_pool_id != pools_.journal_pool_id) value.image_pool_id = pools_.image_pool_id;
  Status dir = directory_.Set(directory_object_, {{DirectoryKey(names_, request_name), FormatDirectoryValue(value)}});
  if (!dir.ok()) {
    (void)volumes_.RemoveObject(object);
    return dir.WithContext("reserve request " + request_name);
  }
  std::string generated = name_prefix.empty() ? DefaultImageName(names_, uuid) : name_prefix + uuid;
  VolumeReservation out{uuid, image_name.empty() ? generated : image_name, source, encryption};
  OmapValues attrs = {{names_.request_name_key, request_name}, {kImageNameKey, out.image_name}};
  if (names_.has_source || !source.empty()) attrs[kSourceKey] = source;
  if (!encryption.kms_id.empty()) {
    attrs[kEncryptKmsKey] = encryption.kms_id;
    attrs[kEncryptionTypeKey] = encryption.type;
  }
  if (pools_.image_pool_id != pools_.journal_pool_id) attrs[kJournalPoolKey] = PoolIdHex(pools_.journal_pool_id);
  Status filled = volumes_.Set(object, attrs);
  if (!filled.ok()) {
    (void)Undo(request_name, uuid);
    return filled.WithContext("reserve request " + request_name);
  }
  return out;
}

Status VolumeJournal::Undo(const std::string& request_name, const std::string& uuid) {
  NBDK_RETURN_IF_ERROR(volumes_.RemoveObject(JournalObject(names_, uuid)));
  const std::string key = DirectoryKey(names_, request_name);
  auto dir = directory_.Get(directory_object_, {key});
  if (!dir.ok()) return dir.status().code() == Code::kNotFound ? Status::Ok() : dir.status();
  auto it = dir->find(key);
  if (it == dir->end()) return Status::Ok();
  // Only our own key: after a stale cleanup the name may point elsewhere.
  auto value = ParseDirectoryValue(it->second);
  if (!value.ok() || value->uuid != uuid) return Status::Ok();
  return directory_.RemoveKeys(directory_object_, {key});
}

Result<std::map<std::string, DirectoryValue>> VolumeJournal::List() {
  std::map<std::string, DirectoryValue> out;
  auto keys = directory_.List(directory_object_, names_.key_prefix);
  if (!keys.ok() && keys.status().code() == Code::kNotFound) return out;
  if (!keys.ok()) return keys.status();
  const size_t prefix = std::string_view(names_.key_prefix).size();
  for (const auto& [key, raw] : *keys) {
    auto value = ParseDirectoryValue(raw);
    if (!value.ok()) return value.status().WithContext(directory_object_ + " key " + key);
    out.emplace(key.substr(prefix), std::move(*value));
  }
  return out;
}

Result<std::optional<VolumeAttributes>> ReadVolumeAttributes(OmapStore& volumes, const std::string& uuid,
                                                             const JournalNames& names) {
  const std::string object = JournalObject(names, uuid);
  std::vector<std::string> keys = {names.request_name_key, kImageNameKey,     kJournalPoolKey, kSourceKey,
                                   kEncryptKmsKey,         kEncryptionTypeKey};
  auto attrs = volumes.Get(object, keys);
  if (!attrs.ok() && attrs.status().code() == Code::kNotFound) return std::optional<VolumeAttributes>();
  if (!attrs.ok()) return attrs.status();
  VolumeAttributes out;
  if (auto it = attrs->find(names.request_name_key); it != attrs->end()) out.request_name = it->second;
  auto image = attrs->find(kImageNameKey);
  out.image_name = image == attrs->end() ? DefaultImageName(names, uuid) : image->second;
  if (auto it = attrs->find(kSourceKey); it != attrs->end()) out.source = it->second;
  if (auto it = attrs->find(kEncryptKmsKey); it != attrs->end()) out.encryption.kms_id = it->second;
  if (auto it = attrs->find(kEncryptionTypeKey); it != attrs->end()) out.encryption.type = it->second;
  if (auto it = attrs->find(kJournalPoolKey); it != attrs->end()) {
    auto id = ParsePoolIdHex(it->second);
    if (!id.ok()) return Status::Corruption(object + ": csi.journalpool: " + id.status().message());
    out.journal_pool_id = *id;
  }
  return std::optional<VolumeAttributes>(std::move(out));
}

std::string RandomUuid() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  uint64_t hi = rng(), lo = rng();
  hi = (hi & ~0xf000ULL) | 0x4000ULL;        // version 4
  lo = (lo & ~(3ULL << 62)) | (2ULL << 62);  // RFC 4122 variant
  char buf[37];
  std::snprintf(buf, sizeof buf, "%08llx-%04llx-%04llx-%04llx-%012llx", (unsigned long long)(hi >> 32),
                (unsigned long long)((hi >> 16) & 0xffff), (unsigned long long)(hi & 0xffff),
                (unsigned long long)(lo >> 48), (unsigned long long)(lo & 0xffffffffffffULL));
  return buf;
}

}  // namespace nbdk
