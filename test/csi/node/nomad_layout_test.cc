// Nomad's request paths pass the Node's path rules when the daemon's
// --csi-root is the node plugin's stage_publish_base_dir. The paths as
// Nomad's client/pluginmanager/csimanager/volume.go builds them:
//   staging: <base>/staging/<namespace>/<volume>/<usage>
//   target:  <base>/per-alloc/<alloc id>/<volume>/<usage>
// with <usage> as UsageOptions.ToFS spells it (interface.go):
// "rw-" or "ro-", the attachment mode, "-", the access mode. Nomad creates
// the staging directory and the target's parent (0700) before it calls, and
// leaves the target itself to the plugin; an unstage whose namespaced
// staging directory is gone goes to the path without the namespace (its
// COMPAT for volumes staged before 1.3).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test/csi/node/node_fixture.h"

namespace nbdk::testing {
namespace {

namespace fs = std::filesystem;

class NomadLayoutTest : public NodeTest {
 protected:
  void SetUp() override {
    NodeTest::SetUp();
    base_ = dir_ + "/nomad/client/csi/node/nbdkeeper";
    node_->options.path_roots = {base_};  // --csi-root=<stage_publish_base_dir>
  }

  static std::string Usage(bool block) {
    return block ? "rw-block-device-single-node-writer" : "rw-file-system-single-node-writer";
  }
  std::string StagingPath(bool block) const { return base_ + "/staging/default/db/" + Usage(block); }
  std::string TargetPath(const std::string& alloc, bool block) const {
    return base_ + "/per-alloc/" + alloc + "/db/" + Usage(block);
  }

  // Nomad's stageVolume: MkdirAll of the staging path, then NodeStage.
  Status NomadStage(const std::string& staging, bool block) {
    fs::create_directories(staging);
    fs::permissions(staging, fs::perms::owner_all);
    StageRequest r = Request(block);
    r.staging_target_path = staging;
    return Stage(r);
  }
  // Nomad's publishVolume: MkdirAll of per-alloc/<alloc>/<volume>, then
  // NodePublish at <usage> beneath it.
  Status NomadPublish(const std::string& staging, const std::string& target, bool block) {
    fs::create_directories(fs::path(target).parent_path());
    PublishRequest p{kVolume, staging, target, Request(block).capability, false};
    return Run([&](auto done) { PublishVolume(*node_, p, Lock(), done); });
  }
  Status NomadUnpublish(const std::string& target) {
    UnpublishRequest u{kVolume, target};
    return Run([&](auto done) { UnpublishVolume(*node_, u, Lock(), done); });
  }
  Status NomadUnstage(const std::string& staging) {
    UnstageRequest r{kVolume, staging};
    return Run([&](auto done) { UnstageVolume(*node_, r, Lock(), done); });
  }

  // One alloc's whole life, in Nomad's order; `staging` is where this
  // volume is staged and unstaged.
  void RunNomadLifecycle(const std::string& staging, bool block) {
    const std::string target = TargetPath("5b0e7a36-0c2f-4f6d-9a3e-1c1d2f3a4b5c", block);
    ASSERT_TRUE(NomadStage(staging, block).ok());
    EXPECT_TRUE(host_.mounted.count(staging + "/" + kVolume)) << "staged beneath Nomad's staging path";
    // Nomad checks whether the staging path itself is a mount point; this
    // plugin mounts beneath it, so every MountVolume stages again: a repeat.
    Status again = NomadStage(staging, block);
    EXPECT_TRUE(again.ok()) << again.ToString();

    Status published = NomadPublish(staging, target, block);
    ASSERT_TRUE(published.ok()) << published.ToString();
    EXPECT_TRUE(block ? fs::is_regular_file(target) : fs::is_directory(target)) << target;
    EXPECT_TRUE(host_.mounted.count(target));
    ASSERT_NE(Record(), nullptr);
    EXPECT_EQ(Record()->staging_path, staging);

    ASSERT_TRUE(NomadUnpublish(target).ok());
    EXPECT_FALSE(fs::exists(target)) << "the mount point the daemon made is gone";
    Status unstaged = NomadUnstage(staging);
    ASSERT_TRUE(unstaged.ok()) << unstaged.ToString();
    EXPECT_TRUE(sup().Snapshots().empty());
    EXPECT_TRUE(host_.mounted.empty());
    EXPECT_EQ(Record(), nullptr);
    EXPECT_TRUE(fs::is_directory(staging)) << "Nomad's own directory stays";
  }

  std::string base_;
};

TEST_F(NomadLayoutTest, AFileSystemVolumeAtNomadsPaths) { RunNomadLifecycle(StagingPath(false), false); }

TEST_F(NomadLayoutTest, ABlockVolumeAtNomadsPaths) { RunNomadLifecycle(StagingPath(true), true); }

TEST_F(NomadLayoutTest, TheStagingPathWithoutANamespace) {
  RunNomadLifecycle(base_ + "/staging/db/" + Usage(false), false);
}

// A kubelet's path, or a Nomad path beneath another plugin's base, is
// outside this root: refused by name before anything is touched.
TEST_F(NomadLayoutTest, PathsOutsideTheBaseDirAreRefused) {
  const std::string kubelet = dir_ + "/kubelet/plugins/kubernetes.io/csi/rbd.nbdkeeper.io/0a1b/globalmount";
  const std::string other = dir_ + "/nomad/client/csi/node/other-plugin/staging/default/db/" + Usage(false);
  for (const std::string& staging : {kubelet, other}) {
    Status s = NomadStage(staging, false);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << staging << ": " << s.ToString();
    EXPECT_NE(s.message().find("csi_root"), std::string::npos) << s.ToString();
    EXPECT_TRUE(host_.calls.empty()) << staging;
    EXPECT_TRUE(sup().Snapshots().empty());
    EXPECT_EQ(Record(), nullptr);
  }

  ASSERT_TRUE(NomadStage(StagingPath(false), false).ok());
  const std::string outside = dir_ + "/nomad/client/csi/node/other-plugin/per-alloc/a1/db/" + Usage(false);
  Status s = NomadPublish(StagingPath(false), outside, false);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.ToString();
  EXPECT_FALSE(fs::exists(outside));
  ASSERT_TRUE(NomadUnstage(StagingPath(false)).ok());
}

}  // namespace
}  // namespace nbdk::testing
