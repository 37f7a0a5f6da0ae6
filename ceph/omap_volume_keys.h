// The names and values of ceph-csi's RADOS omap journals
// (docs/design/controller-layout.md, ceph-csi's
// internal/journal/voljournal.go), as pure functions. Volumes:
//
//   journal pool: csi.volumes.<instance>   csi.volume.<request name> -> <uuid>
//                                          (or <16-hex image pool id>/<uuid>)
//   image pool:   csi.volume.<uuid>        csi.volname, csi.imagename,
//                                          csi.journalpool (when it differs),
//                                          csi.volume.encryptKMS and
//                                          csi.volume.encryptionType (when
//                                          encrypted)
//
// Snapshots, the same shape under other names (JournalNames):
//
//   journal pool: csi.snaps.<instance>     csi.snap.<request name> -> <uuid>
//   image pool:   csi.snap.<uuid>          csi.snapname, csi.imagename
//                                          (csi-snap-<uuid>), csi.source (the
//                                          source volume's RBD image name),
//                                          csi.journalpool (when it differs),
//                                          the two encryption keys (the
//                                          source volume's, when encrypted)
//
// The per-volume object lives in the image pool, as ceph-csi writes it, so
// that an image's attributes are found from the volume ID alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace nbdk {

inline constexpr char kVolNameKey[] = "csi.volname";
inline constexpr char kImageNameKey[] = "csi.imagename";
inline constexpr char kJournalPoolKey[] = "csi.journalpool";
inline constexpr char kSnapNameKey[] = "csi.snapname";
inline constexpr char kSourceKey[] = "csi.source";
// The KMS ID of an encrypted volume or snapshot and its type ("block"), in
// both journals under these names (ceph-csi's voljournal.go:182-183,
// :202-203).
inline constexpr char kEncryptKmsKey[] = "csi.volume.encryptKMS";
inline constexpr char kEncryptionTypeKey[] = "csi.volume.encryptionType";
inline constexpr char kDefaultJournalInstance[] = "default";

// What differs between the volume and the snapshot journal.
struct JournalNames {
  const char* directory_prefix;  // + instance: the directory object
  const char* key_prefix;        // + request name: a directory key; + uuid: the per-object object
  const char* request_name_key;  // the back pointer in the per-object object
  const char* image_prefix;      // + uuid: the image name when csi.imagename is absent
  bool has_source;               // csi.source: the snapshot's source image
};
inline constexpr JournalNames kVolumeJournalNames{"csi.volumes.", "csi.volume.", kVolNameKey, "csi-vol-", false};
inline constexpr JournalNames kSnapshotJournalNames{"csi.snaps.", "csi.snap.", kSnapNameKey, "csi-snap-", true};

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

// "csi-vol-<uuid>": the image name ceph-csi gives a volume whose journal has
// no csi.imagename.
std::string DefaultImageName(std::string_view uuid);

// The same three names for either journal.
std::string DirectoryObject(const JournalNames& names, std::string_view instance);
std::string DirectoryKey(const JournalNames& names, std::string_view request_name);
std::string JournalObject(const JournalNames& names, std::string_view uuid);
std::string DefaultImageName(const JournalNames& names, std::string_view uuid);

// A canonical uuid (8-4-4-4-12 hex digits)?
bool IsCanonicalUuid(std::string_view uuid);

}  // namespace nbdk
