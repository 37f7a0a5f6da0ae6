// ReadKernelFile: the whole of one /proc or sysfs file, read through its fd.
// The one reader of such files for the daemon and the CLI.
//
// Why not std::ifstream: reading /proc/<pid>/* of a process that is exiting
// fails with ESRCH, and libstdc++'s filebuf throws std::ios_base::failure
// on a read error whatever the stream's exception mask; nothing catches it,
// and the daemon ends. Here a vanished file or process is NotFound (ENOENT
// and ESRCH alike: it is gone), any other failure its errno, never an
// exception. At most `max_bytes` are kept (kernel files are small; a
// larger one is cut, not an error). Blocks on the file system: never on
// the loop.
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"

namespace nbdk {

Result<std::string> ReadKernelFile(const std::string& path, size_t max_bytes = 64 * 1024);

}  // namespace nbdk
