#include "journal/node_journal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <mutex>

#include "base/log.h"
#include "base/regular_file.h"
#include "base/unique_fd.h"
#include "journal/node_record_file_name.h"
#include "journal/node_record_frame.h"

namespace nbdk {
namespace {

constexpr std::string_view kTempSuffix = ".tmp";
constexpr const char* kLockName = "LOCK";
constexpr const char* kQuarantineName = "quarantine";

int64_t UnixMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

Result<std::vector<std::string>> ListDir(const std::string& dir) {
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return Status::FromErrno(errno, "list journal directory " + dir);
  std::vector<std::string> names;
  errno = 0;
  while (dirent* e = ::readdir(d.get())) {
    std::string_view name = e->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  if (errno != 0) return Status::FromErrno(errno, "list journal directory " + dir);
  std::sort(names.begin(), names.end());
  return names;
}

// The whole file, refusing more than one maximal frame.
// A symlink or FIFO planted in the journal is Corruption (quarantined).
Result<std::string> ReadRecordFile(const std::string& path) {
  Result<UniqueFd> opened = OpenRegularFile(path, O_RDONLY | O_NOFOLLOW);
  if (!opened.ok()) return opened.status();
  UniqueFd fd = std::move(opened).value();
  constexpr size_t kLimit = kRecordFrameHeaderSize + kMaxRecordPayload;
  std::string data;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno(errno, "read");
    if (n == 0) return data;
    data.append(buf, static_cast<size_t>(n));
    if (data.size() > kLimit) return Status::Corruption("larger than the largest record frame");
  }
}

// Decodes one record file; `name` is its name in the journal directory.
Result<VolumeRecord> ParseRecordFile(const std::string& data, const std::string& name) {
  Result<std::string_view> payload = DecodeRecordFrame(data);
  if (!payload.ok()) return payload.status();
  Result<VolumeRecord> record = DecodeVolumeRecord(*payload);
  if (!record.ok()) return record.status();
  Result<std::string> expected = RecordFileName(record->volume_id);
  if (!expected.ok()) return Status::Corruption("field volume_id: " + expected.status().message());
  if (*expected != name) {
    return Status::Corruption("holds volume \"" + record->volume_id + "\", whose file is " + *expected);
  }
  return record;
}

}  // namespace

struct NodeJournal::State {
  std::mutex mu;
  std::string dir;
  JournalFs* fs;
  UniqueFd dir_fd;
  UniqueFd lock_fd;
  Status sticky;  // the first fsync failure; guarded by mu

  std::string PathOf(std::string_view name) const { return dir + "/" + std::string(name); }

  Status CheckWritable() const {
    if (sticky.ok()) return Status::Ok();
    return Status(sticky.code(),
                  "journal " + dir + " refuses writes after an earlier fsync failure: " + sticky.message());
  }

  // An fsync failure is remembered: see the header.
  Status Fsync(int fd, const std::string& path) {
    Status s = fs->Fsync(fd, path);
    if (!s.ok()) {
      sticky = s;
      NBDK_LOG_ERROR("journal_fsync_failed", {{"dir", dir}, {"error", s.ToString()}});
    }
    return s;
  }

  Status FsyncDir() { return Fsync(dir_fd.get(), dir); }

  Status RemoveTempFiles() {
    Result<std::vector<std::string>> names = ListDir(dir);
    if (!names.ok()) return names.status();
    bool removed = false;
    for (const std::string& name : *names) {
      if (!name.ends_with(kTempSuffix)) continue;
      std::string path = PathOf(name);
      if (::unlink(path.c_str()) != 0) return Status::FromErrno(errno, "remove leftover temp file " + path);
      NBDK_LOG_INFO("journal_temp_removed", {{"file", path}});
      removed = true;
    }
    return removed ? FsyncDir() : Status::Ok();
  }

  Status WriteRecord(const std::string& name, const std::string& frame) {
    std::string path = PathOf(name);
    std::string tmp = path + std::string(kTempSuffix);
    Result<UniqueFd> opened = OpenRegularFile(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW);
    if (!opened.ok()) return opened.status().WithContext("create " + tmp);
    UniqueFd fd = std::move(opened).value();
    Status s = fs->WriteAll(fd.get(), frame, tmp);
    if (s.ok()) s = Fsync(fd.get(), tmp);
    fd.Reset();
    if (s.ok()) s = fs->Rename(tmp, path);
    if (!s.ok()) {
      ::unlink(tmp.c_str());  // best effort: Open removes it otherwise
      return s;
    }
    return FsyncDir();
  }

  // Moves a journal file aside without replacing anything already there.
  Result<std::string> Quarantine(const std::string& name) {
    std::string qdir = PathOf(kQuarantineName);
    if (::mkdir(qdir.c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::FromErrno(errno, "create quarantine directory " + qdir);
    }
    std::string base = qdir + "/" + name + "." + std::to_string(UnixMs());
    std::string target = base;
    for (int n = 1; ::renameat2(AT_FDCWD, PathOf(name).c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) != 0; ++n) {
      if (errno != EEXIST || n > 100) return Status::FromErrno(errno, "quarantine " + PathOf(name) + " as " + target);
      target = base + "." + std::to_string(n);
    }
    UniqueFd qfd(::open(qdir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!qfd.valid()) return Status::FromErrno(errno, "open " + qdir);
    NBDK_RETURN_IF_ERROR(Fsync(qfd.get(), qdir));
    NBDK_RETURN_IF_ERROR(FsyncDir());
    return target;
  }
};

NodeJournal::NodeJournal(std::unique_ptr<State> state) : state_(std::move(state)) {}
NodeJournal::NodeJournal(NodeJournal&&) noexcept = default;
NodeJournal& NodeJournal::operator=(NodeJournal&&) noexcept = default;
NodeJournal::~NodeJournal() = default;

const std::string& NodeJournal::dir() const { return state_->dir; }

Result<NodeJournal> NodeJournal::Open(std::string dir, JournalFs& fs) {
  auto state = std::make_unique<State>();
  state->dir = std::move(dir);
  state->fs = &fs;
  const std::string& d = state->dir;
  if (::mkdir(d.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::FromErrno(errno, "create journal directory " + d);
  }
  state->dir_fd = UniqueFd(::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!state->dir_fd.valid()) return Status::FromErrno(errno, "open journal directory " + d);
  std::string lock = state->PathOf(kLockName);
  Result<UniqueFd> lock_fd = OpenRegularFile(lock, O_RDWR | O_CREAT | O_NOFOLLOW);
  if (!lock_fd.ok()) return lock_fd.status();
  state->lock_fd = std::move(lock_fd).value();
  if (::flock(state->lock_fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return Status::Unavailable("journal " + d + " is in use: another process holds " + lock +
                                 " (is another nbdkeeperd already running?)");
    }
    return Status::FromErrno(errno, "lock " + lock);
  }
  // Only the LOCK holder writes temp files, so none of them is in progress.
  NBDK_RETURN_IF_ERROR(state->RemoveTempFiles());
  return NodeJournal(std::move(state));
}

Status NodeJournal::Put(const VolumeRecord& record) {
  std::lock_guard<std::mutex> lock(state_->mu);
  std::string context = "journal put of volume \"" + record.volume_id + "\"";
  NBDK_RETURN_IF_ERROR(state_->CheckWritable());
  Result<std::string> name = RecordFileName(record.volume_id);
  if (!name.ok()) return name.status().WithContext(context);
  std::string payload = EncodeVolumeRecord(record);
  if (payload.size() > kMaxRecordPayload) {
    return Status::InvalidArgument(context + ": record is " + std::to_string(payload.size()) +
                                   " bytes, more than the limit of " + std::to_string(kMaxRecordPayload));
  }
  return state_->WriteRecord(*name, EncodeRecordFrame(payload)).WithContext(context);
}

Status NodeJournal::Remove(std::string_view volume_id) {
  std::lock_guard<std::mutex> lock(state_->mu);
  std::string context = "journal remove of volume \"" + std::string(volume_id) + "\"";
  NBDK_RETURN_IF_ERROR(state_->CheckWritable());
  Result<std::string> name = RecordFileName(volume_id);
  if (!name.ok()) return name.status().WithContext(context);
  std::string path = state_->PathOf(*name);
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return Status::FromErrno(errno, "remove " + path).WithContext(context);
  }
  return state_->FsyncDir().WithContext(context);
}

Result<LoadResult> NodeJournal::LoadAll() {
  std::lock_guard<std::mutex> lock(state_->mu);
  // Quarantining writes to the directory, so it obeys the sticky error too.
  NBDK_RETURN_IF_ERROR(state_->CheckWritable());
  Result<std::vector<std::string>> names = ListDir(state_->dir);
  if (!names.ok()) return names.status();
  LoadResult result;
  for (const std::string& name : *names) {
    if (name == kLockName || name == kQuarantineName) continue;
    if (!IsRecordFileName(name)) {
      NBDK_LOG_WARN("journal_unknown_file", {{"file", state_->PathOf(name)}});
      continue;
    }
    Result<std::string> data = ReadRecordFile(state_->PathOf(name));
    Result<VolumeRecord> record = data.ok() ? ParseRecordFile(*data, name) : Result<VolumeRecord>(data.status());
    if (record.ok()) {
      result.records.push_back(std::move(record).value());
      continue;
    }
    Status reason = record.status().WithContext("journal file " + state_->PathOf(name));
    Result<std::string> moved = state_->Quarantine(name);
    if (!moved.ok()) return moved.status().WithContext("after " + reason.ToString());
    NBDK_LOG_ERROR("journal_record_quarantined", {{"moved_to", *moved}, {"reason", reason.ToString()}});
    result.quarantined.push_back({name, *moved, reason});
  }
  std::sort(result.records.begin(), result.records.end(),
            [](const VolumeRecord& a, const VolumeRecord& b) { return a.volume_id < b.volume_id; });
  return result;
}

}  // namespace nbdk
