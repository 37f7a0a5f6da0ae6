// The volume ID rule and ceph-csi's volume ID encoding: the one owner of
// what a CSI volume ID may be. The Node's request parsers, the supervisor's
// map requests and the node journal's file names all check it here.
//
// ValidateVolumeId: every volume ID nbdkeeper accepts, dynamic or static.
//
// VolumeId: ceph-csi's CSI volume ID, "<version>-<cluster id length>-
// <cluster id>-<pool id>-<object uuid>" (ceph-csi's internal/util/volid.go).
//
//   0001-0009-rook-ceph-0000000000000002-b0a3c3d5-1d1a-4a9e-9a8f-2d7e0d9b7d51
//   ^ver ^len ^cluster  ^pool id (i64)   ^object uuid (36 chars)
//
// The length field is read first, so a cluster ID containing '-' decodes.
// Pure functions; no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace nbdk {

// The CSI limit on a volume ID, and the fixed part of an encoded one (every
// field but the cluster ID, with the four separators).
inline constexpr size_t kMaxVolumeIdLength = 128;
inline constexpr size_t kVolumeIdFixedLength = 64;

// The one volume ID rule: [A-Za-z0-9._-]{1,128}, not starting with '.' or
// '-'. The ID names the staging mount point, log, key and journal files and
// is the rbd-nbd cookie, so it must be a safe file name and never read as an
// option. A ceph-csi ID meets it when its cluster ID does (the Controller
// refuses a cluster ID that does not: csi/controller/controller_request.cc); a static
// volume's ID is its image name, so such an image needs a name of these
// characters too.
// InvalidArgument naming why: "volume_id: missing", "volume_id: 129 bytes,
// longer than 128", "volume_id 'a/b': only [A-Za-z0-9._-] allowed".
Status ValidateVolumeId(std::string_view volume_id);

struct VolumeId {
  uint16_t encoding_version = 1;  // only 1 exists
  std::string cluster_id;         // selects the config.json entry
  int64_t pool_id = 0;            // the image's pool ("location ID")
  std::string object_uuid;        // names csi.volume.<uuid> and csi-vol-<uuid>

  bool operator==(const VolumeId&) const = default;
};

// Decodes exactly: any shape other than the one above is InvalidArgument
// naming the field ("volume_id: cluster ID length field 'zz01' is not hex").
// Hex digits may be either case (ceph-csi's decoder accepts both); only
// encoding version 1 is accepted, since another version may lay the fields
// out differently. The cluster ID must be non-empty and the UUID canonical
// (8-4-4-4-12 hex digits).
Result<VolumeId> DecodeVolumeId(std::string_view id);

// The inverse of DecodeVolumeId, with lowercase hex. Precondition: `id` is
// valid as DecodeVolumeId would return it (a cluster ID of 1 to 64 bytes, a
// 36-character UUID); then Decode(Encode(id)) == id.
std::string EncodeVolumeId(const VolumeId& id);

}  // namespace nbdk
