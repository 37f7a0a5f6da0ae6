// The image-meta stash: <staging_target_path>/image-meta.json.
//
// NodeUnstageVolume gets only the volume ID and the staging path, so
// NodeStageVolume records what unstage needs before it maps the image. The
// file has ceph-csi's format, so either plugin can unstage a volume the other
// staged (ceph-csi ignores our extra keys; we ignore any it adds):
//
//   {"Version":3,"pool":"rbd","radosNamespace":"","image":"csi-vol-...",
//    "unmapOptions":"","accessType":true,"encrypted":false,
//    "device":"/dev/nbd0","logDir":"","logFileStrategy":"",
//    "clusterID":"rook-ceph","cookie":"0001-0009-rook-ceph-..."}
//
// ceph-csi writes it in place; WriteStash is crash-safe instead.
// WriteStash, ReadStash and RemoveStash are blocking: call them in
// EventLoop::RunBlocking.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace nbdk {

inline constexpr char kStashFileName[] = "image-meta.json";

struct ImageMetaStash {
  int version = 3;                // "Version"; ceph-csi writes 3 and never checks it
  std::string pool;               // "pool"; required
  std::string rados_namespace;    // "radosNamespace"
  std::string image;              // "image"; required
  std::string unmap_options;      // "unmapOptions": the nbd part, comma-separated, as in the volume context
  bool nbd_access = true;         // "accessType": true when mapped with rbd-nbd
  bool encrypted = false;         // "encrypted"
  std::string device;             // "device": "/dev/nbd0"; "" until the image is mapped
  std::string log_dir;            // "logDir": ceph-csi's rbd-nbd log directory
  std::string log_file_strategy;  // "logFileStrategy"
  // nbdkeeper's additions; "" in a file ceph-csi wrote.
  std::string cluster_id;  // "clusterID": also known for static volumes
  std::string cookie;      // "cookie": the rbd-nbd --cookie, to check that
                           // `device` still belongs to this volume

  bool operator==(const ImageMetaStash&) const = default;
};

// <staging_target_path>/image-meta.json
std::string StashPath(std::string_view staging_target_path);

// Compact JSON with every key above.
std::string EncodeStash(const ImageMetaStash& stash);

// Parses a stash. Unknown keys are ignored and null counts as absent, as
// for ceph-csi's Go decoder; absent optional keys keep the defaults above.
// Anything else is Corruption naming `file` and the field:
// "/st/image-meta.json: field device: expected a string". Garbage, a
// truncated or empty text, a missing or empty "pool" or "image", and a
// wrongly typed known key are all Corruption.
Result<ImageMetaStash> DecodeStash(std::string_view json, std::string_view file);

// Replaces the stash atomically: writes image-meta.json.tmp in the same
// directory (0600, O_EXCL after removing a leftover from a crash), fsyncs
// it, renames it over image-meta.json and fsyncs the directory. A crash at
// any point leaves the old file or the new one, never a torn one (a stray
// .tmp at most). On failure the old file is unchanged and the .tmp removed.
Status WriteStash(const std::string& staging_target_path, const ImageMetaStash& stash);

// Reads and decodes the stash. NotFound when there is none; Corruption
// (see DecodeStash) when it does not parse. Never modifies or deletes the
// file, whatever its content; refuses a symlink and anything over 64 KiB.
Result<ImageMetaStash> ReadStash(const std::string& staging_target_path);

// Removes the stash and fsyncs the directory, so a crash cannot bring back
// a stash naming a device that may since belong to another volume. A
// missing stash is success.
Status RemoveStash(const std::string& staging_target_path);

}  // namespace nbdk
