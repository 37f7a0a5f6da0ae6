// JournalFs: the three file-system calls whose failure decides whether a
// journal write is durable - the seam through which tests inject failed
// writes and fsyncs (LevelDB's Env, kept to what the journal needs).
//
// All calls block; they run where NodeJournal runs (EventLoop::RunBlocking).
// Implementations must be thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace nbdk {

class JournalFs {
 public:
  virtual ~JournalFs() = default;
  // Writes all of `data` at the current offset of `fd`, retrying short
  // writes and EINTR. `path` names the file in the error.
  virtual Status WriteAll(int fd, std::string_view data, const std::string& path) = 0;
  // fsync(2) of a file or directory.
  virtual Status Fsync(int fd, const std::string& path) = 0;
  // rename(2): atomically replaces `to`.
  virtual Status Rename(const std::string& from, const std::string& to) = 0;
};

// The real file system. Stateless; lives for the whole process.
JournalFs& PosixJournalFs();

}  // namespace nbdk
