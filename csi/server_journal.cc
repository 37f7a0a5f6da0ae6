#include "csi/server_journal.h"

#include "base/log.h"

namespace nbdk {
namespace {

constexpr uint64_t kRetryMs = 1000;

}  // namespace

ServerJournal::ServerJournal(NodeContext& node) : node_(node), retry_(node.loop) {
  NBDK_CHECK_LOOP_THREAD(node.loop);
  node_.supervisor.SetServerChanged([this](const std::string& id) { Record(id); });
}

ServerJournal::~ServerJournal() { node_.supervisor.SetServerChanged(nullptr); }

void ServerJournal::Record(const std::string& volume_id) {
  NBDK_CHECK_LOOP_THREAD(node_.loop);
  waiting_.erase(volume_id);
  const VolumeRecord* record = node_.volumes.Find(volume_id);
  auto snap = node_.supervisor.Snapshot(volume_id);
  // Unstaged meanwhile (a stage journals its own server when it finishes).
  if (!record || record->state != VolumeState::kStaged || !snap) return;
  VolumeRecord updated = *record;
  updated.rbd_nbd_pid = snap->pid;
  updated.rbd_clients = snap->own_clients;
  if (updated.rbd_nbd_pid == record->rbd_nbd_pid && updated.rbd_clients == record->rbd_clients) return;
  auto lock = node_.volumes.Lock(volume_id);
  if (!lock.ok()) {
    waiting_.insert(volume_id);
    if (!retry_.active()) retry_.Start(kRetryMs, 0, [this] { RetryWaiting(); });
    return;
  }
  auto held = std::make_shared<VolumeOpLock>(std::move(*lock));
  node_.volumes.Put(updated, [held, volume_id, pid = updated.rbd_nbd_pid](Status s) {
    if (!s.ok()) {
      NBDK_LOG_ERROR("server_journal_failed", {{"volume", volume_id}, {"pid", pid}, {"error", s.ToString()}});
    }
  });
}

void ServerJournal::RetryWaiting() {
  std::set<std::string> waiting = std::move(waiting_);
  waiting_.clear();
  for (const std::string& id : waiting) Record(id);
}

}  // namespace nbdk
