#include "csi/node/server_journal.h"

#include "base/log.h"

namespace nbdk {
namespace {

constexpr uint64_t kLockRetryMs = 1000;

}  // namespace

ServerJournal::ServerJournal(NodeContext& node, uint64_t write_retry_ms)
    : node_(node), write_retry_ms_(write_retry_ms), lock_retry_(node.loop), write_retry_(node.loop) {
  NBDK_CHECK_LOOP_THREAD(node.loop);
  node_.supervisor.SetServerChanged([this](const std::string& id) { Record(id); });
}

ServerJournal::~ServerJournal() {
  *alive_ = false;
  node_.supervisor.SetServerChanged(nullptr);
}

void ServerJournal::Record(const std::string& volume_id) {
  NBDK_CHECK_LOOP_THREAD(node_.loop);
  lock_busy_.erase(volume_id);
  write_failed_.erase(volume_id);
  const VolumeRecord* record = node_.volumes.Find(volume_id);
  auto snap = node_.supervisor.Snapshot(volume_id);
  // Unstaged meanwhile (a stage journals its own server when it finishes).
  if (!record || record->state != VolumeState::kStaged || !snap) return;
  VolumeRecord updated = *record;
  updated.rbd_nbd_pid = snap->pid;
  updated.rbd_clients = snap->own_clients;
  updated.rbd_clients_before = snap->clients_before_server;
  if (updated == *record) return;
  auto lock = node_.volumes.Lock(volume_id);
  if (!lock.ok()) return RetryLater(volume_id, lock_busy_, lock_retry_, kLockRetryMs);
  auto held = std::make_shared<VolumeOpLock>(std::move(*lock));
  node_.volumes.Put(updated, [this, alive = alive_, held, volume_id, pid = updated.rbd_nbd_pid,
                              retry_ms = write_retry_ms_](Status s) {
    if (s.ok()) return;
    NBDK_LOG_ERROR("server_journal_failed",
                   {{"volume", volume_id}, {"pid", pid}, {"error", s.ToString()}, {"retry_in_ms", retry_ms}});
    if (*alive) RetryLater(volume_id, write_failed_, write_retry_, retry_ms);
  });
}

void ServerJournal::RetryLater(const std::string& volume_id, std::set<std::string>& waiting, Timer& timer,
                               uint64_t ms) {
  waiting.insert(volume_id);
  if (timer.active()) return;
  timer.Start(ms, 0, [this, &waiting] {
    std::set<std::string> due = std::move(waiting);
    waiting.clear();
    for (const std::string& id : due) Record(id);
  });
}

}  // namespace nbdk
