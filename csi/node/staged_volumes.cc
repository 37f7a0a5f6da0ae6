#include "csi/node/staged_volumes.h"

#include <algorithm>
#include <chrono>

#include "journal/node_record_file_name.h"

namespace nbdk {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

StagedVolumes::StagedVolumes(EventLoop& loop, NodeJournal journal)
    : loop_(loop), journal_(std::make_shared<NodeJournal>(std::move(journal))) {}

StagedVolumes::~StagedVolumes() { *alive_ = false; }

void StagedVolumes::Load(std::function<void(Result<LoadResult>)> done) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  auto result = std::make_shared<Result<LoadResult>>(Status::Internal("journal load did not run"));
  loop_.RunBlocking([journal = journal_, result] { *result = journal->LoadAll(); },
                    [this, alive = alive_, result, done = std::move(done)] {
                      if (!*alive) return;
                      if (result->ok()) {
                        for (const VolumeRecord& r : (*result)->records) records_[r.volume_id] = r;
                        quarantined_ = (*result)->quarantined;
                      }
                      done(std::move(*result));
                    });
}

Result<VolumeOpLock> StagedVolumes::Lock(const std::string& volume_id) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  return locks_.Lock("volume " + volume_id);
}

Result<VolumeOpLock> StagedVolumes::LockImage(const std::string& image_spec) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  Result<VolumeOpLock> lock = locks_.Lock("image " + image_spec);
  if (!lock.ok()) {
    return Status::FailedPrecondition("image " + image_spec +
                                      " is being staged or unstaged by another call; one volume maps an image");
  }
  return lock;
}

const std::vector<QuarantinedFile>& StagedVolumes::Quarantined() const {
  NBDK_CHECK_LOOP_THREAD(loop_);
  return quarantined_;
}

const QuarantinedFile* StagedVolumes::FindQuarantined(const std::string& volume_id) const {
  NBDK_CHECK_LOOP_THREAD(loop_);
  Result<std::string> file = RecordFileName(volume_id);
  if (!file.ok()) return nullptr;
  auto it =
      std::find_if(quarantined_.begin(), quarantined_.end(), [&](const QuarantinedFile& q) { return q.file == *file; });
  return it == quarantined_.end() ? nullptr : &*it;
}

const VolumeRecord* StagedVolumes::Find(const std::string& volume_id) const {
  NBDK_CHECK_LOOP_THREAD(loop_);
  auto it = records_.find(volume_id);
  return it == records_.end() ? nullptr : &it->second;
}

std::vector<VolumeRecord> StagedVolumes::All() const {
  NBDK_CHECK_LOOP_THREAD(loop_);
  std::vector<VolumeRecord> out;
  for (const auto& [id, r] : records_) out.push_back(r);
  return out;
}

void StagedVolumes::Put(VolumeRecord record, std::function<void(Status)> done) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  record.updated_ms = NowMs();
  if (record.created_ms == 0) record.created_ms = record.updated_ms;
  auto rec = std::make_shared<VolumeRecord>(std::move(record));
  auto status = std::make_shared<Status>();
  loop_.RunBlocking([journal = journal_, rec, status] { *status = journal->Put(*rec); },
                    [this, alive = alive_, rec, status, done = std::move(done)] {
                      if (!*alive) return;
                      if (status->ok()) {
                        records_[rec->volume_id] = *rec;
                        Result<std::string> file = RecordFileName(rec->volume_id);  // valid: the Put took it
                        std::erase_if(quarantined_, [&](const QuarantinedFile& q) { return q.file == *file; });
                      }
                      done(*status);
                    });
}

void StagedVolumes::Remove(const std::string& volume_id, std::function<void(Status)> done) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  auto status = std::make_shared<Status>();
  loop_.RunBlocking([journal = journal_, volume_id, status] { *status = journal->Remove(volume_id); },
                    [this, alive = alive_, volume_id, status, done = std::move(done)] {
                      if (!*alive) return;
                      if (status->ok()) records_.erase(volume_id);
                      done(*status);
                    });
}

}  // namespace nbdk
