// FailingJournalFs: the real file system, with switches that make a node
// journal's writes, fsyncs or renames fail (journal/node_journal_fs.h). Set
// the switches while no journal call runs; the journal serialises its calls.
#pragma once

#include <cerrno>
#include <string>
#include <string_view>

#include "journal/node_journal_fs.h"

namespace nbdk::testing {

class FailingJournalFs : public JournalFs {
 public:
  Status WriteAll(int fd, std::string_view data, const std::string& path) override {
    ++writes;
    if (fail_writes || (fail_write_number != 0 && writes == fail_write_number)) {
      return Status::FromErrno(ENOSPC, "write " + path);
    }
    return PosixJournalFs().WriteAll(fd, data, path);
  }
  Status Fsync(int fd, const std::string& path) override {
    ++fsyncs;
    if (fail_fsync_number != 0 && fsyncs == fail_fsync_number) return Status::FromErrno(fsync_errno, "fsync " + path);
    return PosixJournalFs().Fsync(fd, path);
  }
  Status Rename(const std::string& from, const std::string& to) override {
    ++renames;
    if (fail_rename_number != 0 && renames == fail_rename_number) {
      return Status::FromErrno(ENOSPC, "rename " + from + " to " + to);
    }
    return PosixJournalFs().Rename(from, to);
  }

  bool fail_writes = false;
  int writes = 0;
  int fail_write_number = 0;  // the 1-based write (one per Put) that fails; 0: none
  int fsyncs = 0;
  int fail_fsync_number = 0;  // the 1-based fsync call that fails; 0: none
  int fsync_errno = EIO;      // what it fails with
  int renames = 0;
  int fail_rename_number = 0;  // the 1-based rename (one per Put) that fails, with ENOSPC; 0: none
};

}  // namespace nbdk::testing
