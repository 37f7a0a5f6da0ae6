// Test-only: a volume staged before a reboot, written into the node journal
// of a daemon that will run with --state-dir=<dir>/state: the journal knows
// it (staged at `staging_path`, published at `target`), nothing serves it.
// The Node calls on it need no nbd and no Ceph.
#pragma once

#include <filesystem>
#include <string>

#include "journal/node_journal.h"

namespace nbdk::test {

inline Status PlantStaleBootVolume(const std::string& dir, const std::string& volume_id,
                                   const std::string& staging_path, const std::string& target) {
  std::filesystem::create_directories(dir + "/state");
  auto journal = NodeJournal::Open(dir + "/state/journal");
  if (!journal.ok()) return journal.status();
  VolumeRecord r;
  r.volume_id = volume_id;
  r.cluster_id = "test";
  r.pool = "rbd";
  r.image = "img-a";
  r.user_id = "nbdk";
  r.keyfile_path = dir + "/keys/none.key";
  r.nbd_device = "/dev/nbd900";
  r.cookie = r.volume_id;
  r.fs_type = "ext4";
  r.staging_path = staging_path;
  r.published_targets = {{target, false, false, {}}};
  r.boot_id = "00000000-0000-0000-0000-000000000000";
  r.state = VolumeState::kStaged;
  return journal->Put(r);
}

}  // namespace nbdk::test
