// StagedVolumes: the volumes staged on this node, as the loop sees them,
// backed by the durable NodeJournal.
//
// The journal is written first and the in-memory table second, so the
// table never claims more than the disk holds. Journal I/O runs on the
// thread pool (RunBlocking); everything else is loop thread only.
//
// Each volume also has an operation lock (csi/op_locks.h): CSI allows one
// operation per volume at a time, and a second call while one is in flight
// gets ABORTED ("operation pending for volume ...").
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "base/status.h"
#include "csi/op_locks.h"
#include "journal/node_journal.h"

namespace nbdk {

// Holds one volume's operation lock until destroyed; it may outlive the
// StagedVolumes (at shutdown).
using VolumeOpLock = OpLocks::Guard;

class StagedVolumes {
 public:
  StagedVolumes(EventLoop& loop, NodeJournal journal);
  ~StagedVolumes();

  // Reads every record into the table (at start). Quarantined files are
  // reported in the result and kept (Quarantined); `done` runs on the loop.
  void Load(std::function<void(Result<LoadResult>)> done);

  // The records the load found damaged and moved aside, less those of
  // volumes journaled again since (a new stage's record supersedes one).
  // Their volumes are in no table: nothing heals, unmaps or unmounts them.
  const std::vector<QuarantinedFile>& Quarantined() const;
  // The quarantined record of `volume_id`, or null.
  const QuarantinedFile* FindQuarantined(const std::string& volume_id) const;

  // Aborted "operation pending for volume <id>" when another call holds it.
  Result<VolumeOpLock> Lock(const std::string& volume_id);
  // The lock of an image or snapshot ("pool/[ns/]image[@snap]", what the
  // one-map-per-image check compares), which stage and unstage hold beside
  // their volume's once they know the image: two volume IDs naming one
  // image are never staged at once (the journal's one-map-per-image check
  // sees a record only once it is written). FailedPrecondition naming the
  // image when another call holds it.
  Result<VolumeOpLock> LockImage(const std::string& image_spec);

  const VolumeRecord* Find(const std::string& volume_id) const;
  std::vector<VolumeRecord> All() const;

  // Journals `record` (updated_ms set now), then replaces it in the table.
  void Put(VolumeRecord record, std::function<void(Status)> done);
  // Removes the journal record, then the table entry. Absent is OK.
  void Remove(const std::string& volume_id, std::function<void(Status)> done);

 private:
  EventLoop& loop_;
  std::shared_ptr<NodeJournal> journal_;  // shared with in-flight pool work
  std::map<std::string, VolumeRecord> records_;
  std::vector<QuarantinedFile> quarantined_;
  OpLocks locks_;  // keys "volume <id>", "image <path>"
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace nbdk
