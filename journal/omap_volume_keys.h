// The names and values of ceph-csi's RADOS omap volume journal
// (docs/ceph-csi-compat.md), as pure functions:
//
//   journal pool: csi.volumes.<instance>   csi.volume.<request name> -> <uuid>
//                                          (or <16-hex image pool id>/<uuid>)
//   image pool:   csi.volume.<uuid>        csi.volname, csi.imagename,
//                                          csi.journalpool (when it differs)
//
// The per-volume object lives in the image pool, as ceph-csi writes it, so
// that an image's attributes are found from the volume ID alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/base/status.h"

namespace nbdk {

inline constexpr char kVolNameKey[] = "csi.volname";
inline constexpr char kImageNameKey[] = "csi.imagename";
inline constexpr char kJournalPoolKey[] = "csi.journalpool";
inline constexpr char kDefaultJournalInstance[] = "default";

// "csi.volumes.<instance>": the directory object.
std::string DirectoryObject(std::string_view instance);
// "csi.volume.<request name>": the directory key of one CO request name.
std::string DirectoryKey(std::string_view request_name);
// "csi.volume.<uuid>": the per-volume object.
std::string VolumeObject(std::string_view uuid);

// A pool id as 16 lowercase hex digits, big-endian ("000000000000000a").
std::string PoolIdHex(int64_t pool_id);
// The inverse; InvalidArgument unless exactly 16 hex digits (either case).
Result<int64_t> ParsePoolIdHex(std::string_view hex);

// A directory key's value: the uuid, and the image pool id when the image
// lives in a pool other than the journal's.
struct DirectoryValue {
  std::optional<int64_t> image_pool_id;
  std::string uuid;

  bool operator==(const DirectoryValue&) const = default;
};
std::string FormatDirectoryValue(const DirectoryValue& value);
// Corruption naming the value unless it is "<uuid>" or "<16 hex>/<uuid>"
// with a canonical 36-character uuid.
Result<DirectoryValue> ParseDirectoryValue(std::string_view value);

// "csi-vol-<uuid>": the image name when csi.imagename is absent (the same
// rule as csi/volume_id.h ImageNameFor, which journal/ does not depend on).
std::string DefaultImageName(std::string_view uuid);

// A canonical uuid (8-4-4-4-12 hex digits)?
bool IsCanonicalUuid(std::string_view uuid);

}  // namespace nbdk
