// The checks after the chaos: filesystems intact, nothing left behind.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "test/chaos/chaos_volume.h"
#include "test/common/vm_volume.h"

namespace nbdk::chaos {

// Maps the (unstaged) image read-only with a plain `rbd-nbd map -f`, runs
// `e2fsck -fn` or `xfs_repair -n` on it and unmaps it. OK for a block
// volume without a filesystem.
Status CheckFilesystem(const vmtest::VmCeph& ceph, const ChaosVolume& v);

// What the run left behind: rbd-nbd processes for its images, mounts under
// `root`, configured nbd devices among `devices`, files in the key dir,
// records in the journal dir. Empty when clean.
std::vector<std::string> FindLeftovers(const vmtest::VmCeph& ceph, const std::vector<std::string>& images,
                                       const std::vector<std::string>& devices, const std::string& root,
                                       const std::string& key_dir, const std::string& journal_dir);

}  // namespace nbdk::chaos
