// Request paths (staging, target, volume paths) confined beneath the
// daemon's path roots (csi_root, the operator's mount_roots and its own
// staging directory) before the daemon touches them.
//
// A path from a request must lie strictly beneath a root, and no component
// below that root may be a symbolic link: otherwise a request could make the
// daemon mount over, unmount or remove something elsewhere on the node.
// Resolution uses openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) where the
// kernel has it (5.6+) and an equivalent walk of O_PATH | O_NOFOLLOW opens
// otherwise. Mount points are created and removed relative to their
// confined parent's descriptor. mount(8) and umount(8) still take the path
// as a string: a root process able to swap a component for a symlink between
// the check and the command is outside this threat model (kubelet's and
// Nomad's directories are root's).
//
// Every function here BLOCKS (file system calls): run it in RunBlocking.
// Errors: InvalidArgument for a path outside the root or through a symlink;
// FailedPrecondition for a missing parent or a node of the wrong kind.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace nbdk {

// Clean absolute directories; a path is confined beneath the one it lies in.
using PathRoots = std::vector<std::string>;

enum class PathKind { kMissing, kDirectory, kFile };

// What is at `path` (a clean absolute path, as csi/node/node_request.h
// checks), confined beneath its root. `field` names the path in errors. A
// symlink at the leaf is an error like one higher up; a missing parent is
// kMissing.
Result<PathKind> InspectBeneath(const PathRoots& roots, const std::string& path, const std::string& field);

// Creates the mount point at `path` when nothing is there: a directory
// (0750) for a filesystem, an empty regular file (0600) for a block bind
// mount. An existing node of the right kind is kept. Returns whether this
// call created it (only then may RemoveCreatedMountPoint remove it later).
Result<bool> CreateMountPointBeneath(const PathRoots& roots, const std::string& path, bool block,
                                     const std::string& field);

// Removes a mount point this daemon created: rmdir for a directory, unlink
// for a file. Already gone is OK; a non-empty directory is an error.
Status RemoveCreatedMountPoint(const PathRoots& roots, const std::string& path, const std::string& field);

}  // namespace nbdk
