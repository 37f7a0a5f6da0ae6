// NodePublishVolume (csi/node/volume_operations.h) and the access mode: a
// SINGLE_NODE_SINGLE_WRITER volume is published at one target at a time
// (csi-test's "should fail when volume with single node single writer access
// mode is already mounted at a different target path"); other single-node
// modes may be published at several.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>

#include "test/csi/node/node_fixture.h"

namespace nbdk::testing {
namespace {

using Mode = csi::v1::VolumeCapability::AccessMode;

class VolumePublishTest : public NodeTest {
 protected:
  Status Publish(const std::string& pod, Mode::Mode mode) {
    std::filesystem::create_directories(dir_ + "/" + pod);
    PublishRequest p{kVolume, Staging(), Target(pod), Request().capability, false};
    p.capability.access_mode = mode;
    return Run([&](auto done) { PublishVolume(*node_, p, Lock(), done); });
  }
  Status Unpublish(const std::string& pod) {
    UnpublishRequest u{kVolume, Target(pod)};
    return Run([&](auto done) { UnpublishVolume(*node_, u, Lock(), done); });
  }
  std::string Target(const std::string& pod) const { return dir_ + "/" + pod + "/mnt"; }
};

TEST_F(VolumePublishTest, SingleNodeSingleWriterIsPublishedAtOneTargetAtATime) {
  ASSERT_TRUE(Stage(Request()).ok());
  ASSERT_TRUE(Publish("pod-a", Mode::SINGLE_NODE_SINGLE_WRITER).ok());
  EXPECT_TRUE(Publish("pod-a", Mode::SINGLE_NODE_SINGLE_WRITER).ok()) << "a repeat is idempotent";

  size_t calls = host_.calls.size();
  Status s = Publish("pod-b", Mode::SINGLE_NODE_SINGLE_WRITER);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find(Target("pod-a")), std::string::npos) << s.ToString();
  EXPECT_EQ(host_.calls.size(), calls) << "nothing is touched";
  EXPECT_FALSE(Exists(Target("pod-b")));
  EXPECT_EQ(Record()->published_targets.size(), 1u);

  // Once the first target is gone, another may take the volume.
  ASSERT_TRUE(Unpublish("pod-a").ok());
  ASSERT_TRUE(Publish("pod-b", Mode::SINGLE_NODE_SINGLE_WRITER).ok());
  ASSERT_TRUE(Unpublish("pod-b").ok());
  ExpectUnstaged();
  ExpectNothingLeft();
}

// The mode of the first publish is journaled: a second target is refused
// whatever mode the second asks for, and also after a daemon restart (the
// record is read back from the journal).
TEST_F(VolumePublishTest, ASingleWriterTargetKeepsOthersOutWhateverTheyAsk) {
  ASSERT_TRUE(Stage(Request()).ok());
  ASSERT_TRUE(Publish("pod-a", Mode::SINGLE_NODE_SINGLE_WRITER).ok());
  ASSERT_TRUE(Record()->published_targets.front().single_writer);
  for (Mode::Mode other : {Mode::SINGLE_NODE_WRITER, Mode::SINGLE_NODE_MULTI_WRITER}) {
    Status s = Publish("pod-b", other);
    EXPECT_EQ(s.code(), Code::kFailedPrecondition) << Mode::Mode_Name(other) << ": " << s.ToString();
    EXPECT_NE(s.message().find("was published SINGLE_NODE_SINGLE_WRITER at " + Target("pod-a")), std::string::npos)
        << s.ToString();
  }
  EXPECT_EQ(Record()->published_targets.size(), 1u);
  EXPECT_FALSE(Exists(Target("pod-b")));

  ReloadJournal();
  ASSERT_NE(Record(), nullptr);
  EXPECT_TRUE(Record()->published_targets.front().single_writer);
  EXPECT_EQ(Publish("pod-b", Mode::SINGLE_NODE_WRITER).code(), Code::kFailedPrecondition);
  ASSERT_TRUE(Unpublish("pod-a").ok());
  ExpectUnstaged();
  ExpectNothingLeft();
}

TEST_F(VolumePublishTest, OtherSingleNodeModesArePublishedAtSeveralTargets) {
  ASSERT_TRUE(Stage(Request()).ok());
  ASSERT_TRUE(Publish("pod-a", Mode::SINGLE_NODE_WRITER).ok());
  ASSERT_TRUE(Publish("pod-b", Mode::SINGLE_NODE_MULTI_WRITER).ok());
  EXPECT_EQ(Record()->published_targets.size(), 2u);
  ASSERT_TRUE(Unpublish("pod-a").ok());
  ASSERT_TRUE(Unpublish("pod-b").ok());
  ExpectUnstaged();
  ExpectNothingLeft();
}

}  // namespace
}  // namespace nbdk::testing
