// OpenRegularFile: open(2) for files the daemon reads or writes in
// directories where something else could be planted at the path (its state
// dir, the journal, staging paths, key and config files).
//
//  - O_NONBLOCK on open: opening a FIFO waits for its other end - for
//    ever, on a pool thread, holding the journal lock or a volume's
//    operation; with O_NONBLOCK the open returns at once (or fails ENXIO
//    for a writer without a reader). It is cleared again once the file is
//    known to be regular, where it means nothing.
//  - fstat: anything but a regular file (FIFO, socket, device, directory)
//    is refused with an error naming the file and what it is.
//  - a symlink at the last component is refused, not followed, when the
//    caller passes O_NOFOLLOW (its own files: logs, journal, stash); files
//    an operator provides (ceph.conf, key files) may be symlinks.
//
// O_CLOEXEC is always added. Blocks on the file system: never on the loop.
#pragma once

#include <sys/types.h>

#include <string>

#include "base/status.h"
#include "base/unique_fd.h"

namespace nbdk {

// Errors: Corruption "<path>: is a symlink, not followed" /
// "<path>: is a FIFO, not a regular file"; otherwise the errno of
// open(2) as "open <path>: ...".
Result<UniqueFd> OpenRegularFile(const std::string& path, int flags, mode_t mode = 0600);

}  // namespace nbdk
