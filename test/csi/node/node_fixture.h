// NodeTest: the CSI Node operations on the host, no root, no kernel nbd, no
// Ceph - a real Supervisor driving fake_rbd_nbd (test/supervisor), a real
// node journal whose writes can fail (FailingJournalFs), and FaultNodeEnv
// for key files, the stash, mount points and simulated mounts. One static
// volume "vol-1" of image rbd/img, mapped as /dev/nbd3.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "csi/node/node_context.h"
#include "csi/node/stage_transaction.h"
#include "csi/node/volume_operations.h"
#include "test/csi/node/fault_node_env.h"
#include "test/journal/failing_journal_fs.h"
#include "test/supervisor/supervisor_fixture.h"

namespace nbdk::testing {

class NodeTest : public SupervisorTest {
 public:
  // Fault injection, for parametrised tests' tables.
  void FailHostStep(const std::string& step) { host_.Fail(step); }
  void FailJournalWrite(int number) { journal_fs_.fail_write_number = number; }
  void FailMap() { Behave("img.map", "mode=exit exit_code=1 stderr=injected_map_failure"); }
  void RemoveClusterConfig() { std::filesystem::remove(dir_ + "/config.json"); }
  void RemoveMountTable() { std::filesystem::remove(dir_ + "/mountinfo"); }
  // The fake rbd-nbd's `unmap` of our device fails (exit 1) until cleared.
  void FailUnmap() { Behave("nbd3.unmap", "exit_code=1 stderr=injected_unmap_failure"); }
  // Every fault above cleared.
  void ClearFaults() {
    journal_fs_.fail_write_number = 0;
    Behave("img.map", "device=" + std::string(kDevice));
    WriteClusterConfig();
    std::filesystem::remove(dir_ + "/fake/nbd3.unmap");
  }

 protected:
  static constexpr const char* kVolume = "vol-1";
  static constexpr const char* kDevice = "/dev/nbd3";

  void SetUp() override {
    SupervisorTest::SetUp();
    std::filesystem::create_directories(Staging());
    ClearFaults();
    MakeSysfs(3);  // the map prints /dev/nbd3
    Result<NodeJournal> journal = NodeJournal::Open(dir_ + "/journal", journal_fs_);
    ASSERT_TRUE(journal.ok()) << journal.status().ToString();
    volumes_ = std::make_unique<StagedVolumes>(loop_, std::move(journal).value());
    NodeOptions options;
    options.node_id = "node-1";
    options.key_dir = dir_ + "/keys";
    options.path_roots = {dir_};
    options.sysfs_root = dir_ + "/sys";
    options.resolve.cluster.cluster_config_path = dir_ + "/config.json";
    options.boot_id = "boot-1";
    node_ = std::make_unique<NodeContext>(NodeContext{loop_, sup(), rados_, *volumes_, host_, options});
  }

  void TearDown() override {
    node_.reset();
    UnmapAllAndShutdownNode();
    SupervisorTest::TearDown();
  }

  void WriteClusterConfig() {
    std::ofstream(dir_ + "/config.json") << R"([{"clusterID": "c1", "monitors": ["10.0.0.1:6789"]}])";
  }
  // The kernel's view of /dev/nbd3: connected, with our cookie.
  void ConnectInSysfs() { std::ofstream(dir_ + "/sys/block/nbd3/backend") << kVolume << "\n"; }
  std::string Staging() const { return dir_ + "/staging"; }
  std::string MountPoint() const { return Staging() + "/" + kVolume; }
  std::string KeyFile() const { return dir_ + "/keys/" + std::string(kVolume) + ".key"; }
  std::string Stash() const { return Staging() + "/image-meta.json"; }

  StageRequest Request(bool block = false) const {
    StageRequest r;
    r.volume_id = kVolume;
    r.staging_target_path = Staging();
    r.capability.block = block;
    r.capability.fs_type = block ? "" : "ext4";
    r.user_id = "csi";
    r.user_key = "AQD-secret==";
    r.static_volume = true;
    r.cluster_id = "c1";
    r.pool = "rbd";
    r.image_name = "img";
    return r;
  }

  Status Stage(StageRequest request) {
    return Run([&](auto done) { StageVolume(*node_, std::move(request), Lock(), done); });
  }
  Status Unstage() {
    UnstageRequest r{kVolume, Staging()};
    return Run([&](auto done) { UnstageVolume(*node_, r, Lock(), done); });
  }

  VolumeOpLock Lock() {
    Result<VolumeOpLock> lock = volumes_->Lock(kVolume);
    EXPECT_TRUE(lock.ok()) << lock.status().ToString();
    return std::move(lock).value();
  }

  // Runs the operation `start` begins until its `done` ran.
  template <typename Start>
  Status Run(Start start) {
    std::optional<Status> got;
    start([&](Status s) { got = s; });
    EXPECT_TRUE(RunUntil([&] { return got.has_value(); }));
    return got.value_or(Status::Internal("did not finish"));
  }

  // The node's volumes as a restarted daemon finds them: read back from
  // the journal files (the mapping itself stays with the supervisor).
  // Returns what the load quarantined.
  std::vector<QuarantinedFile> ReloadJournal() {
    NodeOptions options = node_->options;
    node_.reset();
    volumes_.reset();  // lets go of the journal's lock
    Result<NodeJournal> journal = NodeJournal::Open(dir_ + "/journal", journal_fs_);
    EXPECT_TRUE(journal.ok()) << journal.status().ToString();
    if (!journal.ok()) return {};
    volumes_ = std::make_unique<StagedVolumes>(loop_, std::move(journal).value());
    std::optional<Result<LoadResult>> loaded;
    volumes_->Load([&](Result<LoadResult> r) { loaded = std::move(r); });
    EXPECT_TRUE(RunUntil([&] { return loaded.has_value(); }));
    node_ = std::make_unique<NodeContext>(NodeContext{loop_, sup(), rados_, *volumes_, host_, options});
    EXPECT_TRUE(loaded && loaded->ok()) << (loaded ? loaded->status().ToString() : "not loaded");
    return loaded && loaded->ok() ? (*loaded)->quarantined : std::vector<QuarantinedFile>{};
  }

  const VolumeRecord* Record() const { return volumes_->Find(kVolume); }
  size_t JournalFiles() const {
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir_ + "/journal")) n += e.path().extension() == ".rec";
    return n;
  }
  bool Exists(const std::string& path) const { return std::filesystem::exists(path); }

  void ExpectUnstaged() {
    Status s = Unstage();
    EXPECT_TRUE(s.ok()) << s.ToString();
  }

  // Nothing of the volume is left: no mapping, mount, mount point, stash,
  // key file or journal record.
  void ExpectNothingLeft() {
    EXPECT_TRUE(sup().Snapshots().empty());
    EXPECT_TRUE(host_.mounted.empty());
    EXPECT_FALSE(Exists(MountPoint()));
    EXPECT_FALSE(Exists(Stash()));
    EXPECT_FALSE(Exists(KeyFile()));
    EXPECT_EQ(Record(), nullptr);
    EXPECT_EQ(JournalFiles(), 0u);
  }

  FailingJournalFs journal_fs_;
  FaultNodeEnv host_{loop_};
  RadosClients rados_{loop_};
  std::unique_ptr<StagedVolumes> volumes_;
  std::unique_ptr<NodeContext> node_;

 private:
  // SupervisorTest's, with the staged volumes gone before the loop.
  void UnmapAllAndShutdownNode() {
    ClearFaults();
    volumes_.reset();
    UnmapAllAndShutdown();
  }
};

}  // namespace nbdk::testing
