// A volume of the chaos run and the CSI calls that stage, publish,
// unpublish and unstage it through the daemon's gRPC socket.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "csi/proto/csi.grpc.pb.h"
#include "test/chaos/fio_job.h"
#include "test/common/vm_volume.h"

namespace nbdk::chaos {

enum class Access { kExt4, kXfs, kBlock };

std::string AccessName(Access access);

struct ChaosVolume {
  std::string id;  // also the RBD image name (a static volume)
  Access access = Access::kExt4;
  std::string staging, target;
  std::string device;  // /dev/nbdX, from /status once staged
  bool created = false, staged = false, published = false;
  std::unique_ptr<FioJob> fio;

  // mkfs.xfs refuses a device under 300 MiB.
  int image_mib() const { return access == Access::kXfs ? 320 : 128; }
  // Where fio writes: a file on the filesystem, or the block device itself.
  std::string fio_path() const { return access == Access::kBlock ? target : target + "/fio.dat"; }
};

// `root`/staging/<id> and `root`/pods/<id>.
ChaosVolume MakeVolume(const std::string& root, const std::string& id, Access access);

// The cluster id the run's ceph-csi config names.
inline constexpr char kClusterId[] = "chaos";

Status Stage(csi::v1::Node::Stub& node, const vmtest::VmCeph& ceph, const ChaosVolume& v);
Status Publish(csi::v1::Node::Stub& node, const ChaosVolume& v);
Status Unpublish(csi::v1::Node::Stub& node, const ChaosVolume& v);
Status Unstage(csi::v1::Node::Stub& node, const ChaosVolume& v);

}  // namespace nbdk::chaos
