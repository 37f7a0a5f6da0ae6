// VolumeJournal: the write side of ceph-csi's omap journals - what makes
// CreateVolume and CreateSnapshot idempotent by CO request name
// (docs/design/controller-layout.md). One class for both: JournalNames says
// which.
//
// Reserve order: exclusive create of csi.volume.<uuid> (a new uuid on
// conflict, at most 5 tries), then the directory key, then the per-volume
// keys; the caller creates the image last. Undo runs in reverse. A crash
// between any two steps leaves a state Lookup recognizes: a directory key
// whose per-volume object is missing, lacks csi.volname, or names another
// request is stale and is cleaned up, so the retry reserves afresh and
// exactly one reservation (one image name) survives. A snapshot reservation
// also records its source (csi.source, the source volume's image name); a
// Lookup for another source is AlreadyExists, as CSI asks of a snapshot name
// reused for another volume. A volume cloned from a volume records the
// source volume's ID there (nbdkeeper's own; ceph-csi ignores it), so that
// DeleteVolume finds a temporary snapshot a crash left on the source.
// An encrypted volume's reservation records its KMS ID and type with the
// other per-volume keys, in the same write (ceph-csi's ReserveName); a
// snapshot's records its source volume's.
//
// BLOCKING (every call goes to the stores); not thread-safe: the caller
// serializes calls per request name (the controller's per-name op lock).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "base/status.h"
#include "ceph/omap_store.h"
#include "ceph/omap_volume_keys.h"

namespace nbdk {

// csi.volume.encryptKMS and csi.volume.encryptionType as recorded, read
// and compared by csi/controller/volume_encryption.h. An empty kms_id: not
// encrypted (neither key is written).
struct JournalEncryption {
  std::string kms_id;  // "default" for the built-in KMS
  std::string type;    // "block"; "" when a release before the key wrote only the KMS ID

  bool operator==(const JournalEncryption&) const = default;
};

struct VolumeReservation {
  std::string uuid;
  std::string image_name;
  std::string source;  // csi.source: a snapshot's source image, a volume clone's source volume ID; or ""
  JournalEncryption encryption;

  bool operator==(const VolumeReservation&) const = default;
};

// What the per-volume object says, for calls that have only the volume ID.
struct VolumeAttributes {
  std::string request_name;                // csi.volname; "" if absent
  std::string image_name;                  // csi.imagename, or csi-vol-<uuid>
  std::optional<int64_t> journal_pool_id;  // csi.journalpool, when set
  std::string source;                      // csi.source; "" if absent
  JournalEncryption encryption;
};

struct VolumeJournalPools {
  int64_t image_pool_id = 0;
  int64_t journal_pool_id = 0;  // == image_pool_id unless journalPool is set
};

class VolumeJournal {
 public:
  // `directory` is the journal pool, `volumes` the image pool (the same store
  // when they are one pool); both outlive the journal. `new_uuid` returns a
  // fresh random canonical uuid per call. `names`: the volume or the
  // snapshot journal.
  VolumeJournal(OmapStore& directory, OmapStore& volumes, VolumeJournalPools pools, std::string instance,
                std::function<std::string()> new_uuid, const JournalNames& names = kVolumeJournalNames);

  // The live reservation of `request_name`, or nullopt. Cleans up a stale
  // directory key (and our own half-written per-volume object) first.
  // AlreadyExists when the name is reserved for an image in another pool,
  // or (snapshots) for another `source`.
  Result<std::optional<VolumeReservation>> Lookup(const std::string& request_name, const std::string& source = "");

  // Reserves `request_name` (the caller found no reservation). The image
  // name is `image_name`, or <name_prefix><uuid> when empty (`name_prefix`
  // "": csi-vol-, csi-snap-: ceph-csi's volumeNamePrefix);
  // `source` is recorded as csi.source (always in the snapshot journal; in
  // the volume journal when not empty: a clone's source volume);
  // `encryption` with the other keys when its kms_id is not empty. On
  // failure, what was written is undone (best effort; Lookup cleans up
  // whatever a crash leaves).
  Result<VolumeReservation> Reserve(const std::string& request_name, const std::string& image_name = "",
                                    const std::string& source = "", const std::string& name_prefix = "",
                                    const JournalEncryption& encryption = {});

  // Every directory entry (request name -> value); an empty map when the
  // directory object does not exist. Corruption names an unparsable value.
  Result<std::map<std::string, DirectoryValue>> List();

  // Removes the per-volume object, then the directory key if it still
  // points at `uuid`. Idempotent.
  Status Undo(const std::string& request_name, const std::string& uuid);

 private:
  const JournalNames& names_;
  OmapStore& directory_;
  OmapStore& volumes_;
  VolumeJournalPools pools_;
  std::string directory_object_;
  std::function<std::string()> new_uuid_;
};

// BLOCKING. Reads csi.volume.<uuid> (csi.snap.<uuid>) from `volumes` (the
// image pool); nullopt when the object is missing.
Result<std::optional<VolumeAttributes>> ReadVolumeAttributes(OmapStore& volumes, const std::string& uuid,
                                                             const JournalNames& names = kVolumeJournalNames);

// A random (version 4) uuid, lowercase; a per-thread generator seeded from
// std::random_device, so calls from pool threads need no lock.
std::string RandomUuid();

}  // namespace nbdk
