#include "journal/node_journal_fs.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "base/durable_file.h"

namespace nbdk {
namespace {

class PosixFs final : public JournalFs {
 public:
  Status WriteAll(int fd, std::string_view data, const std::string& path) override {
    return nbdk::WriteAll(fd, data, path);
  }

  Status Fsync(int fd, const std::string& path) override {
    // No EINTR retry: fsync is not interrupted by signals on Linux, and a
    // retried fsync after a failure may falsely report success.
    if (::fsync(fd) != 0) return Status::FromErrno(errno, "fsync " + path);
    return Status::Ok();
  }

  Status Rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return Status::FromErrno(errno, "rename " + from + " to " + to);
    return Status::Ok();
  }
};

}  // namespace

JournalFs& PosixJournalFs() {
  static PosixFs fs;
  return fs;
}

}  // namespace nbdk
