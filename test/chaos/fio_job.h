// One fio process writing to a volume for the whole chaos run, verifying
// what it wrote as it goes: 4 KiB random O_DIRECT writes, each batch of
// writes read back and checked against its crc32c (verify_backlog), the
// first bad block or IO error fatal. Stopped with SIGINT at the end, when
// fio writes its JSON report.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "test/common/vm_command.h"

namespace nbdk::chaos {

struct FioResult {
  int error = 0;           // fio's job error (errno): 0, EILSEQ for a verify failure, else an IO error
  uint64_t write_kib = 0;  // written, and read back to verify
  uint64_t verify_kib = 0;
  double max_clat_s = 0;     // the longest single IO (write or verify read)
  bool ended_early = false;  // fio exited by itself before Stop()
  std::string exit;          // fio's exit status, as text

  bool verify_failed() const;
  bool io_failed() const { return error != 0 && !verify_failed(); }
};

class FioJob {
 public:
  // `path` is a file on a filesystem (created, `mib` MiB) or a block device
  // (its first `mib` MiB). At most `rate_iops` IO per second (0: no bound).
  // The JSON report goes to `output`.
  static Result<std::unique_ptr<FioJob>> Start(const std::string& name, const std::string& path, int mib, int rate_iops,
                                               const std::string& output);
  // Whether fio is still running (an error stops it: verify_fatal).
  bool Running();
  // SIGINT, wait, parse the report.
  Result<FioResult> Stop();

 private:
  FioJob(vmtest::SpawnedChild child, std::string output) : child_(std::move(child)), output_(std::move(output)) {}

  vmtest::SpawnedChild child_;
  std::string output_;
  bool exited_ = false;
  vmtest::Exit exit_;
};

}  // namespace nbdk::chaos
