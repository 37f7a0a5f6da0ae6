// Test-only: a small tmpfs mounted for a test's lifetime - a real file
// system that runs out of blocks or inodes. Mounting needs CAP_SYS_ADMIN:
// where it is refused, mounted() is false and error() says why, for the
// test's GTEST_SKIP.
#pragma once

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

namespace nbdk::test {

class TmpfsMount {
 public:
  // Creates `dir` if missing and mounts a tmpfs there with `options`
  // (e.g. "size=64k", "nr_inodes=8").
  TmpfsMount(std::string dir, const std::string& options) : dir_(std::move(dir)) {
    std::filesystem::create_directories(dir_);
    if (::mount("tmpfs", dir_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) == 0) {
      mounted_ = true;
    } else {
      error_ = "mount -t tmpfs -o " + options + " " + dir_ + ": " + std::strerror(errno);
    }
  }
  ~TmpfsMount() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;

  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

  // Appends to `path` until a write fails; returns that errno (ENOSPC once
  // every block is taken).
  static int FillBlocks(const std::string& path) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) return errno;
    char page[4096] = {};
    int err = 0;
    while (err == 0) {
      if (::write(fd, page, sizeof page) < 0) err = errno;
    }
    ::close(fd);
    return err;
  }

  // Creates empty files <dir>/inode-<n> until one fails; returns that errno
  // (ENOSPC once every inode is taken).
  static int FillInodes(const std::string& dir) {
    for (int n = 0;; ++n) {
      int fd = ::open((dir + "/inode-" + std::to_string(n)).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
      if (fd < 0) return errno;
      ::close(fd);
    }
  }

 private:
  std::string dir_;
  bool mounted_ = false;
  std::string error_;
};

}  // namespace nbdk::test
