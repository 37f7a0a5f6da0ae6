// VolumeCapabilitySpec: a validated CSI VolumeCapability, as nbdkeeper can
// serve it.
//
// Supported:
//  - access type: exactly one of block or mount (the proto's oneof);
//  - fs_type: "" (meaning ext4), "ext4" or "xfs";
//  - access modes SINGLE_NODE_WRITER, SINGLE_NODE_READER_ONLY,
//    SINGLE_NODE_SINGLE_WRITER, SINGLE_NODE_MULTI_WRITER; and, as ceph-csi's
//    RBD node plugin allows: MULTI_NODE_MULTI_WRITER for block volumes only
//    (a shared block device is coordinated by its users; a shared ext4/xfs
//    would be corrupted), and MULTI_NODE_READER_ONLY (ROX volumes, which
//    ceph-csi's controller creates from snapshots and clones; read_only is
//    set so the image is mapped and mounted read-only).
// MULTI_NODE_SINGLE_WRITER is not supported (ceph-csi does not offer it).
//
// Mount flags: each flag may itself be a comma list ("noatime,discard", as
// `mount -o` and ceph-csi accept); they are split into single options and
// allow-listed by csi/mount_flags.h. The spec caps them at 4 KiB in total.
// volume_mount_group is ignored: nbdkeeper does not advertise
// VOLUME_MOUNT_GROUP, so a CO does not send it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "csi/proto/csi.pb.h"

namespace nbdk {

using AccessMode = csi::v1::VolumeCapability::AccessMode::Mode;

struct VolumeCapabilitySpec {
  bool block = false;
  std::string fs_type;                     // "ext4" or "xfs"; "" for block
  std::vector<std::string> mount_options;  // one option each, for mount -o; empty for block
  AccessMode access_mode = csi::v1::VolumeCapability::AccessMode::UNKNOWN;
  bool read_only = false;   // a *_READER_ONLY mode: map and mount read-only
  bool multi_node = false;  // MULTI_NODE_*: other nodes may map it too

  bool operator==(const VolumeCapabilitySpec&) const = default;
};

// Validates `cap` (the request's volume_capability field, named `field` in
// messages). A missing access type or access mode, or malformed mount
// flags, are InvalidArgument; a well-formed capability nbdkeeper does not
// support (mode or fs type) is `unsupported_code` - FailedPrecondition for
// stage and publish ("Exceeds capabilities"), InvalidArgument for expand.
Result<VolumeCapabilitySpec> ParseVolumeCapability(const csi::v1::VolumeCapability& cap, std::string_view field,
                                                   Code unsupported_code);

}  // namespace nbdk
