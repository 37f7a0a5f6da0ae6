#include "csi/attach_pid_journal.h"

#include "daemon/base/log.h"

namespace nbdk {
namespace {

constexpr uint64_t kRetryMs = 1000;

}  // namespace

AttachPidJournal::AttachPidJournal(NodeContext& node) : node_(node), retry_(node.loop) {
  NBDK_CHECK_LOOP_THREAD(node.loop);
  node_.supervisor.SetAttachSpawned([this](const std::string& id, int pid) { Record(id, pid); });
}

AttachPidJournal::~AttachPidJournal() { node_.supervisor.SetAttachSpawned(nullptr); }

void AttachPidJournal::Record(const std::string& volume_id, int pid) {
  NBDK_CHECK_LOOP_THREAD(node_.loop);
  waiting_.erase(volume_id);
  const VolumeRecord* record = node_.volumes.Find(volume_id);
  auto snap = node_.supervisor.Snapshot(volume_id);
  // Unstaged meanwhile, superseded by a later attach, or already journaled.
  if (!record || record->state != VolumeState::kStaged || !snap || snap->pid != pid || record->rbd_nbd_pid == pid) return;
  auto lock = node_.volumes.Lock(volume_id);
  if (!lock.ok()) {
    waiting_[volume_id] = pid;
    if (!retry_.active()) retry_.Start(kRetryMs, 0, [this] { RetryWaiting(); });
    return;
  }
  VolumeRecord updated = *record;
  updated.rbd_nbd_pid = pid;
  auto held = std::make_shared<VolumeOpLock>(std::move(*lock));
  node_.volumes.Put(updated, [held, volume_id, pid](Status s) {
    if (!s.ok()) {
      NBDK_LOG_ERROR("attach_pid_journal_failed", {{"volume", volume_id}, {"pid", pid}, {"error", s.ToString()}});
    }
  });
}

void AttachPidJournal::RetryWaiting() {
  std::map<std::string, int> waiting = std::move(waiting_);
  waiting_.clear();
  for (const auto& [id, pid] : waiting) Record(id, pid);
}

}  // namespace nbdk
