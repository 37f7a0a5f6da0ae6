// The one way a small file outside the node journal (the image-meta stash,
// nbdkeeperctl's persisted volumes, the Node's key files) is replaced or
// removed so that a crash or a power cut leaves the old file or the new
// one, whole:
//   write <path>.tmp (fresh: O_EXCL, O_NOFOLLOW), fsync it, rename it over
//   <path>, fsync the directory.
// Without the directory's fsync the rename itself can be lost with the
// power: Debian 13's cold-boot test lost nbdkeeperctl's persisted volumes
// that way. Blocking: never on the loop thread.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "base/status.h"

namespace nbdk {

// Writes all of `data` at `fd`'s offset, retrying short writes and EINTR;
// `path` names the file in the error ("write <path>: ...").
Status WriteAll(int fd, std::string_view data, const std::string& path);

// Errors name the step and the file ("create <path>.tmp: ...", "fsync
// directory <dir>: ..."); a failed write leaves <path> as it was and no
// <path>.tmp.
Status ReplaceFileDurably(const std::string& path, std::string_view data, mode_t mode);

// Removes <path> and fsyncs its directory, so that a crash cannot bring
// the file back. A missing file is success.
Status RemoveFileDurably(const std::string& path);

// mkdir(2), then an fsync of the parent when the directory is new. An
// existing directory is success.
Status MakeDirectoryDurably(const std::string& dir, mode_t mode);

// fsync(2) of a directory: makes a rename, unlink or mkdir in it durable.
Status FsyncDirectory(const std::string& dir);

}  // namespace nbdk
