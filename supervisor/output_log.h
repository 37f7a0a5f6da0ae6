// OutputLog: one volume's rbd-nbd output, kept twice: the last N lines in
// memory (for /status) and appended to a size-capped file.
//
// The file is <state_dir>/logs/<volume>.log. When a flush leaves it larger
// than max_file_bytes, it is rewritten to its last max_file_bytes/2 bytes
// (from a line start) through a temp file and rename(), so a reader never
// sees a torn file and the size stays bounded.
//
// The file is opened with O_NOFOLLOW and must be a regular file: a symlink
// planted at the path is refused, not followed (the daemon runs as root and
// would append to, or trim and rename over, whatever it names), and a FIFO
// cannot block the writer (base/regular_file.h). Such a path fails
// like any write error, logged.
//
// File I/O never runs on the loop: lines are buffered and written by
// RunBlocking, one flush in flight at a time. Write errors are logged once
// per error streak and do not affect the mapping. A flush in flight when
// the OutputLog is destroyed still completes; nothing is lost except lines
// appended afterwards.
//
// Loop thread only.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/event_loop.h"

namespace nbdk {

class OutputLog {
 public:
  OutputLog(EventLoop& loop, std::string path, size_t tail_lines, size_t max_file_bytes);
  ~OutputLog();
  OutputLog(const OutputLog&) = delete;
  OutputLog& operator=(const OutputLog&) = delete;

  // Records one line, e.g. source "map[1234] stderr". The file line gets a
  // UTC timestamp; the in-memory tail keeps "<source>: <line>".
  void Append(std::string_view source, std::string_view line);
  std::vector<std::string> Tail() const { return {tail_.begin(), tail_.end()}; }
  const std::string& path() const { return shared_->path; }

  // The volume was unmapped: its log goes with it. Lines not yet written
  // are dropped and later ones go to the tail only; a flush in flight
  // finishes first, so it cannot create the file again afterwards.
  void Remove();
  // Deletes `path` and its trim temp file on the thread pool; a missing
  // file is fine, other errors are logged.
  static void RemoveFile(EventLoop& loop, const std::string& path);

  // Cuts `path` back to its last `keep_bytes` bytes (from a line start) if
  // it is larger than `max_bytes`. Blocking; exposed for tests.
  static void TrimFile(const std::string& path, size_t max_bytes, size_t keep_bytes);

 private:
  struct Shared {
    std::string path;
    size_t max_file_bytes = 0;
    std::string pending;  // loop thread
    bool flushing = false;
    bool failing = false;
    bool removed = false;
  };
  static void Flush(EventLoop& loop, std::shared_ptr<Shared> shared);

  EventLoop& loop_;
  size_t tail_lines_;
  std::deque<std::string> tail_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace nbdk
