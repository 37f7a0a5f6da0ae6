// Shared pieces of the node journal tests: a scratch directory, a fully
// populated VolumeRecord, and a fixture with a journal directory in it.
#pragma once

#include <ftw.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "journal/node_journal.h"
#include "journal/node_record_file_name.h"
#include "journal/volume_record.h"

namespace nbdk::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class ScratchDir {
 public:
  ScratchDir() {
    const char* base = getenv("TMPDIR");
    std::string tmpl = std::string(base ? base : "/tmp") + "/nbdk-journal-XXXXXX";
    path_ = mkdtemp(tmpl.data()) ? tmpl : "";
  }
  ~ScratchDir() {
    if (!path_.empty()) {
      nftw(
          path_.c_str(), [](const char* p, const struct stat*, int, FTW*) { return ::remove(p); }, 16,
          FTW_DEPTH | FTW_PHYS);
    }
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

// A record with every field set to a non-default value.
inline VolumeRecord FullRecord(const std::string& volume_id) {
  VolumeRecord r;
  r.volume_id = volume_id;
  r.cluster_id = "rook-ceph";
  r.monitors = {"10.0.0.1:6789", "10.0.0.2:6789", "[fd00::3]:3300"};
  r.pool = "replicapool";
  r.rados_namespace = "tenant-a";
  r.image = "csi-vol-b0285c97";
  r.snap = "nightly";
  r.user_id = "csi-rbd-node";
  r.keyfile_path = "/run/nbdkeeper/keys/" + volume_id + ".key";
  r.ceph_conf_path = "/etc/ceph/ceph.conf";
  r.nbd_device = "/dev/nbd3";
  r.cookie = "nbdk-7f3a \"quoted\" \\ \xc3\xa9";
  r.map_options = {"try-netlink", "io-timeout=0"};
  r.fs_type = "ext4";
  r.block = false;
  r.read_only = true;
  r.staging_path = "/var/lib/kubelet/plugins/kubernetes.io/csi/staging/" + volume_id;
  r.mount_flags = {"noatime", "discard"};
  r.published_targets = {{"/var/lib/kubelet/pods/a/volumes/mount", false, false, {"noatime"}},
                         {"/var/lib/kubelet/pods/b/mount", true, false, {}, true}};
  r.multi_node = true;
  r.luks_mapper = "luks-rbd-" + r.volume_id;
  r.rbd_nbd_pid = 4242;
  r.rbd_clients = {{"client.4123", "10.0.0.7:0/3440592934"}, {"client.4188", "[fd00::7]:0/17"}};
  r.boot_id = "0b5e4f3c-9a7d-4d4e-8b1f-2c3d4e5f6a7b";
  r.reattach_timeout_s = 300;
  r.created_ms = 1795000000000;
  r.updated_ms = 1795000000123;
  r.state = VolumeState::kStaged;
  return r;
}

// The names in `dir`, sorted.
inline std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

// A journal at <scratch>/journal, opened on the real or a failing JournalFs.
class NodeJournalTest : public ::testing::Test {
 protected:
  std::string JournalDir() const { return scratch_.path() + "/journal"; }
  std::string PathOf(const std::string& volume_id) const { return JournalDir() + "/" + *RecordFileName(volume_id); }
  NodeJournal OpenJournal(JournalFs& fs = PosixJournalFs()) {
    Result<NodeJournal> j = NodeJournal::Open(JournalDir(), fs);
    EXPECT_TRUE(j.ok()) << j.status().ToString();
    return std::move(j).value();
  }
  LoadResult Load(NodeJournal& j) {
    Result<LoadResult> r = j.LoadAll();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : LoadResult{};
  }

  ScratchDir scratch_;
};

}  // namespace nbdk::testing
