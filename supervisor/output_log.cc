#include "supervisor/output_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "base/log.h"
#include "base/regular_file.h"
#include "base/status.h"

namespace nbdk {

namespace {

std::string UtcTimestamp() {
  auto now = std::chrono::system_clock::now();
  std::time_t secs = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof(out), "%s.%03dZ", buf, static_cast<int>(ms));
  return out;
}

// Appends `data` to `path` (creating its directory), then trims it.
Status AppendToFile(const std::string& path, const std::string& data, size_t max_bytes) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  Result<UniqueFd> fd = OpenRegularFile(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0640);
  if (!fd.ok()) return fd.status();
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = write(fd->get(), data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "write " + path);
    }
    off += static_cast<size_t>(n);
  }
  fd->Reset();
  OutputLog::TrimFile(path, max_bytes, max_bytes / 2);
  return Status::Ok();
}

}  // namespace

OutputLog::OutputLog(EventLoop& loop, std::string path, size_t tail_lines, size_t max_file_bytes)
    : loop_(loop), tail_lines_(tail_lines), shared_(std::make_shared<Shared>()) {
  shared_->path = std::move(path);
  shared_->max_file_bytes = max_file_bytes;
}

OutputLog::~OutputLog() = default;

void OutputLog::Append(std::string_view source, std::string_view line) {
  std::string tagged = std::string(source) + ": " + std::string(line);
  if (tail_lines_ > 0) {
    tail_.push_back(tagged);
    while (tail_.size() > tail_lines_) tail_.pop_front();
  }
  if (shared_->removed) return;
  shared_->pending += UtcTimestamp() + " " + tagged + "\n";
  if (!shared_->flushing) Flush(loop_, shared_);
}

void OutputLog::Flush(EventLoop& loop, std::shared_ptr<Shared> shared) {
  shared->flushing = true;
  auto batch = std::make_shared<std::string>(std::move(shared->pending));
  shared->pending.clear();
  auto result = std::make_shared<Status>();
  // `work` gets copies only: it must not touch loop-owned state.
  loop.RunBlocking(
      [path = shared->path, max = shared->max_file_bytes, batch, result] { *result = AppendToFile(path, *batch, max); },
      [&loop, shared, result] {
        shared->flushing = false;
        if (shared->removed) return RemoveFile(loop, shared->path);
        if (!result->ok() && !shared->failing) {
          NBDK_LOG_WARN("output_log_write_failed", {{"path", shared->path}, {"error", result->message()}});
        }
        shared->failing = !result->ok();
        if (!shared->pending.empty()) Flush(loop, shared);
      });
}

void OutputLog::Remove() {
  shared_->removed = true;
  shared_->pending.clear();
  if (!shared_->flushing) RemoveFile(loop_, shared_->path);
}

void OutputLog::RemoveFile(EventLoop& loop, const std::string& path) {
  auto error = std::make_shared<std::string>();
  loop.RunBlocking(
      [path, error] {
        for (const std::string& p : {path, path + ".tmp"}) {
          if (unlink(p.c_str()) != 0 && errno != ENOENT) *error = Status::FromErrno(errno, "remove " + p).message();
        }
      },
      [path, error] {
        if (!error->empty()) NBDK_LOG_WARN("output_log_remove_failed", {{"path", path}, {"error", *error}});
      });
}

void OutputLog::TrimFile(const std::string& path, size_t max_bytes, size_t keep_bytes) {
  Result<UniqueFd> in = OpenRegularFile(path, O_RDONLY | O_NOFOLLOW);
  struct stat st {};
  if (!in.ok() || fstat(in->get(), &st) != 0 || static_cast<size_t>(st.st_size) <= max_bytes) return;
  std::string tail(keep_bytes, '\0');
  ssize_t n = pread(in->get(), tail.data(), keep_bytes, st.st_size - static_cast<off_t>(keep_bytes));
  if (n < 0) return;
  tail.resize(static_cast<size_t>(n));
  // Start at a line boundary so the file never begins with half a line.
  if (size_t nl = tail.find('\n'); nl != std::string::npos) tail.erase(0, nl + 1);
  std::string tmp = path + ".tmp";
  Result<UniqueFd> out = OpenRegularFile(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0640);
  if (!out.ok()) return;
  bool ok = write(out->get(), tail.data(), tail.size()) == static_cast<ssize_t>(tail.size());
  out->Reset();
  // rename() replaces whatever entry is at `path`; it never follows it.
  if (ok) {
    rename(tmp.c_str(), path.c_str());
  } else {
    unlink(tmp.c_str());
  }
}

}  // namespace nbdk
