// VolumeRecord: what the node journal remembers about one staged volume -
// enough to re-adopt its rbd-nbd process after a daemon restart, or to map
// it again after a reboot.
//
// Never holds a secret: the cephx key stays in the key file, whose path is
// recorded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ceph/ceph_address.h"
#include "ceph/image_spec.h"

namespace nbdk {

// One NodePublishVolume target of a staged volume.
struct PublishedTarget {
  std::string path;
  bool read_only = false;
  // The daemon made the mount point (so unpublish may remove it). Absent in
  // records older than this field: false, so their targets are kept.
  bool created = false;
  // The publish request's mount flags (allow-listed), so that a heal
  // remount restores the same mount. Absent in older records: none.
  std::vector<std::string> mount_flags;
  // Published as SINGLE_NODE_SINGLE_WRITER: while this target stays, no
  // other may join, whatever access mode the other asks for. Absent in
  // older records (and written only when set): false.
  bool single_writer = false;
  bool operator==(const PublishedTarget&) const = default;
};

// How far NodeStageVolume got. Staging: the record was written before the
// map; whatever exists of the volume may be half made. Staged: mapped and
// mounted, as the record says.
enum class VolumeState { kStaging, kStaged };

// The state's name, as the record's "state" member holds it on disk and
// /status shows it: "staging", "staged".
std::string_view VolumeStateName(VolumeState state);

// The inverse of VolumeStateName: nullopt for any other text.
std::optional<VolumeState> ParseVolumeState(std::string_view name);

struct VolumeRecord {
  std::string volume_id;              // CSI volume id; at most 128 bytes
  std::string cluster_id;             // ceph-csi cluster id
  std::vector<std::string> monitors;  // "10.0.0.1:6789", ...
  std::string pool;
  std::string rados_namespace;  // "" for the default namespace
  std::string image;
  // The snapshot of `image` the volume maps (read-only); "" for the image
  // itself. Absent in older records (and written only when set): "". A
  // re-attach and an adoption serve exactly this, never the image's head.
  std::string snap;
  std::string user_id;       // cephx user, without "client."
  std::string keyfile_path;  // the key itself is never recorded
  std::string ceph_conf_path;
  std::string nbd_device;  // "/dev/nbd3"; "" before mapping
  // An encrypted volume's open LUKS mapper on nbd_device, "luks-rbd-<id>"
  // (encryption/luks_volume.h): what its mounts sit on. "" when it is not
  // encrypted or not open yet; absent in older records (and written only
  // when set).
  std::string luks_mapper;
  std::string cookie;                    // rbd-nbd --cookie, also in sysfs
  std::vector<std::string> map_options;  // extra rbd-nbd map options
  std::string fs_type;                   // "ext4", "xfs", or "" for block
  bool block = false;                    // a raw block volume
  bool read_only = false;
  // Staged MULTI_NODE_MULTI_WRITER (block): other nodes' clients of the
  // image are not foreign (supervisor/image_fence.h). Absent in older
  // records (and written only when set): false.
  bool multi_node = false;
  // The stage request's mount flags (allow-listed), for a heal remount of
  // the staging mount. Absent in older records: none.
  std::vector<std::string> mount_flags;
  std::string staging_path;
  // The daemon made <staging_path>/<volume_id>; false in older records.
  bool mount_point_created = false;
  std::vector<PublishedTarget> published_targets;
  int32_t rbd_nbd_pid = 0;  // 0 while no process runs
  // The Ceph clients of this volume's rbd-nbd processes, past and present
  // (supervisor/image_fence.h): after a restart their watches and lock are
  // still this volume's own. Absent in older records, and written only
  // when there are some: none.
  std::vector<CephClient> rbd_clients;
  // The image's clients when the current rbd-nbd was started, kept only
  // until that server's own clients are known (then they are in
  // rbd_clients): a daemon restarted in between finds the server it adopts
  // among the clients since. Absent otherwise, and in older records.
  std::optional<std::vector<CephClient>> rbd_clients_before;
  std::string boot_id;  // boot the pid and device belong to
  uint32_t reattach_timeout_s = 0;
  int64_t created_ms = 0;  // unix time, milliseconds
  int64_t updated_ms = 0;
  VolumeState state = VolumeState::kStaging;

  bool operator==(const VolumeRecord&) const = default;
};

// The image `record` maps, as the cluster is reached: pool, namespace,
// image, snapshot, monitors, ceph.conf, cephx user and key file.
ImageSpec RecordedImage(const VolumeRecord& record);

// Compact JSON with one member per field, named as above.
std::string EncodeVolumeRecord(const VolumeRecord& record);

// Parses and validates JSON from EncodeVolumeRecord. Every field is
// required and type-checked, except those added after the first release
// (the `created` flags, the mount flags, `single_writer`, `multi_node`, `luks_mapper`,
// `snap`, `rbd_clients` and `rbd_clients_before`, each CephClient::ToString text), which older
// records lack; unknown members are ignored, so an older daemon
// can still read (and, on its next Put, drop) a newer daemon's additions.
// A `snap` present is a name by CheckCephName (ceph/image_spec.h): it goes
// onto rbd-nbd's command line at every re-attach.
// Corruption names the field:
// "field monitors[1]: expected a string".
Result<VolumeRecord> DecodeVolumeRecord(std::string_view json);

}  // namespace nbdk
