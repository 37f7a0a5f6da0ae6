// Test-only: what the systemd VM tests share across the power cut. The
// names are fixed, so the tests after the next boot find the volumes the
// tests before it left staged: the unit's CSI socket and health port (the
// defaults the config of docs/operate/systemd.md keeps), the cluster, the
// images and the kubelet paths a CO would use.
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "csi/proto/csi.grpc.pb.h"
#include "test/common/vm_volume.h"

namespace nbdk::systemdtest {

inline constexpr char kUnit[] = "nbdkeeperd";
inline constexpr char kVolumesUnit[] = "nbdkeeper-volumes";
inline constexpr char kSocket[] = "unix:///run/nbdkeeper/csi.sock";
inline constexpr int kHealthPort = 9810;
inline constexpr char kCluster[] = "sd-cluster";
inline constexpr char kCephCsiConfig[] = "/etc/ceph-csi-config/config.json";
inline constexpr char kDaemonConfig[] = "/etc/nbdkeeper/config.json";
// The page whose install commands the tests run, relative to the source
// tree; it marks them with kInstallMarker on the line before their block.
inline constexpr char kInstallPage[] = "docs/operate/systemd.md";
inline constexpr char kInstallMarker[] = "<!-- install: test/systemd runs the next block as written -->";

// One CSI volume as kubelet stages and publishes it.
struct CsiVolume {
  std::string image;  // also the (static) volume id
  bool block = false;

  std::string StagingPath() const;
  std::string TargetPath() const;
  csi::v1::VolumeCapability Capability() const;
  csi::v1::NodeStageVolumeRequest StageRequest(const vmtest::VmCeph& ceph) const;
  csi::v1::NodePublishVolumeRequest PublishRequest() const;
  // Where the writer and the marker data go: a file on the filesystem, or
  // the block device itself.
  std::string DataPath() const;
};

const CsiVolume& Ext4Volume();
const CsiVolume& BlockVolume();

// The volume nbdkeeperctl maps and persists (mounted at kCtlMount).
inline constexpr char kCtlImage[] = "sd-ctl";
inline constexpr char kCtlMount[] = "/mnt/sd-ctl";

// Data written just before the power cut, checked after the next boot: a
// file on a filesystem, or 4 KiB at kBlockMarkerOffset of a block device.
inline constexpr off_t kBlockMarkerOffset = 8 << 20;
std::string MarkerText(const std::string& image);
Status WriteMarker(const std::string& path, bool block, const std::string& text);
Result<std::string> ReadMarker(const std::string& path, bool block);

// Every systemd VM suite: the VM's Ceph, and a skip outside the VM.
class SystemdVmTest : public ::testing::Test {
 protected:
  static vmtest::VmCeph& Ceph();
  void SetUp() override;
};

// Clients of the daemon's CSI socket (the unit's by default).
std::unique_ptr<csi::v1::Node::Stub> NodeStub(const std::string& endpoint = kSocket);
std::unique_ptr<csi::v1::Identity::Stub> IdentityStub(const std::string& endpoint = kSocket);

// `nbdkeeperctl --config kDaemonConfig ARGS...`, where
// docs/operate/systemd.md installs it: exit code and merged output.
struct CtlRun {
  int exit = -1;
  std::string output;
};
CtlRun Ctl(const std::vector<std::string>& args);

}  // namespace nbdk::systemdtest
