// After the power cut (cold-boot.sh): the node boots again from the same
// root disk, its /run and nbd devices gone, the Ceph cluster still there.
// The unit starts by itself, reports the CSI volumes as stale-boot without
// hanging or mapping anything for them, nbdkeeper-volumes maps the
// persisted volume, and the CO can stage and publish the rest again with
// their data intact.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "test/common/vm_command.h"
#include "test/systemd/systemd_vm_env.h"
#include "test/systemd/unit_control.h"
#include "test/systemd/written_volumes.h"

namespace nbdk::systemdtest {
namespace {

using namespace std::chrono_literals;
using vmtest::GetVolumeStatus;
using vmtest::RbdNbdProcessesFor;

class ColdBoot : public SystemdVmTest {
 protected:
  static double SinceBoot(const std::string& unit) {
    auto p = UnitProperties(unit, {"ActiveEnterTimestampMonotonic"});
    return p.ok() ? std::stod((*p)["ActiveEnterTimestampMonotonic"]) / 1e6 : -1;
  }
};

TEST_F(ColdBoot, TheUnitStartsAndReportsStaleBootWithoutMappingAnything) {
  double waited = WaitUntil(
      [] {
        auto s = StateOf(kUnit);
        return s.ok() && s->active_state == "active";
      },
      180s);
  ASSERT_GE(waited, 0) << "nbdkeeperd did not become active after the boot";
  std::printf("[ cold boot ] nbdkeeperd active %.1f s after the kernel started\n", SinceBoot(kUnit));
  for (const CsiVolume* v : {&Ext4Volume(), &BlockVolume()}) {
    auto s = GetVolumeStatus(kHealthPort, v->image);
    ASSERT_TRUE(s) << v->image << " missing from /status";
    EXPECT_EQ(s->state, "StaleBoot") << v->image;
    EXPECT_EQ(s->device, "") << v->image << ": a device of the last boot shown as current";
    EXPECT_TRUE(RbdNbdProcessesFor(Ceph(), v->image).empty()) << v->image << " was mapped again by itself";
    EXPECT_FALSE(vmtest::IsMountPoint(v->StagingPath())) << v->image;
  }
}

TEST_F(ColdBoot, ThePersistedVolumeIsMappedAndMountedAtBoot) {
  std::string state = WaitForOneshot(kVolumesUnit, 240s);
  ASSERT_NE(state, "") << "nbdkeeper-volumes did not finish";
  ASSERT_EQ(state, "active") << "nbdkeeper-volumes failed";
  EXPECT_TRUE(vmtest::IsMountPoint(kCtlMount));
  auto marker = ReadMarker(std::string(kCtlMount) + "/marker", false);
  ASSERT_TRUE(marker.ok()) << marker.status().ToString();
  EXPECT_EQ(*marker, MarkerText(kCtlImage));
  std::printf("[ cold boot ] persisted volume mounted %.1f s after the kernel started\n", SinceBoot(kVolumesUnit));
  CtlRun status = Ctl({"status"});
  std::printf("%s", status.output.c_str());
}

TEST_F(ColdBoot, TheCoStagesAndPublishesThemAgainWithTheirData) {
  auto node = NodeStub();
  for (const CsiVolume* v : {&Ext4Volume(), &BlockVolume()}) {
    auto start = std::chrono::steady_clock::now();
    csi::v1::NodeStageVolumeResponse staged;
    grpc::ClientContext c1;
    grpc::Status s = node->NodeStageVolume(&c1, v->StageRequest(Ceph()), &staged);
    ASSERT_TRUE(s.ok()) << v->image << ": " << s.error_message();
    csi::v1::NodePublishVolumeResponse published;
    grpc::ClientContext c2;
    s = node->NodePublishVolume(&c2, v->PublishRequest(), &published);
    ASSERT_TRUE(s.ok()) << v->image << ": " << s.error_message();
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    auto marker = ReadMarker(v->DataPath(), v->block);
    ASSERT_TRUE(marker.ok()) << marker.status().ToString();
    EXPECT_EQ(*marker, MarkerText(v->image)) << v->image << ": data written before the power cut";
    auto status = GetVolumeStatus(kHealthPort, v->image);
    ASSERT_TRUE(status);
    EXPECT_EQ(status->state, "Connected");
    std::printf("[ cold boot ] %s staged and published again in %.2f s on %s\n", v->image.c_str(), took,
                status->device.c_str());
  }
}

// Leaves the node clean: every volume unpublished, unstaged, unmapped.
TEST_F(ColdBoot, EverythingUnmapsCleanly) {
  auto node = NodeStub();
  for (const CsiVolume* v : {&Ext4Volume(), &BlockVolume()}) UnpublishAndUnstage(*node, Ceph(), *v);
  CtlRun unmap = Ctl({"unmap", kCtlImage});
  EXPECT_EQ(unmap.exit, 0) << unmap.output;
  EXPECT_FALSE(vmtest::IsMountPoint(kCtlMount));
}

}  // namespace
}  // namespace nbdk::systemdtest
