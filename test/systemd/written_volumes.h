// Test-only: the CSI volumes a VM test stages and publishes on one node
// (Ext4Volume and BlockVolume), each with an O_DIRECT writer running until
// the test ends, and what each step of such a test checks about them: the
// rbd-nbd serving each, /status, and the writers' pauses and errors. Shared
// by the systemd unit's tests and the node container's (test/container).
// Blocking; its checks report through gtest (EXPECT/ASSERT).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "csi/proto/csi.grpc.pb.h"
#include "test/common/vm_volume.h"
#include "test/systemd/systemd_vm_env.h"

namespace nbdk::systemdtest {

// NodeUnpublishVolume, then NodeUnstageVolume of `v`; EXPECTs both to
// succeed and no rbd-nbd to serve it afterwards.
void UnpublishAndUnstage(csi::v1::Node::Stub& node, const vmtest::VmCeph& ceph, const CsiVolume& v);

class WrittenVolumes {
 public:
  // The daemon's /status on 127.0.0.1:health_port; `volumes` (default
  // Ext4Volume and BlockVolume): a suite of another VM on the same native
  // cluster names images of its own, since a powered-off VM's volumes stay.
  WrittenVolumes(vmtest::VmCeph& ceph, int health_port,
                 std::vector<const CsiVolume*> volumes = {&Ext4Volume(), &BlockVolume()});

  const std::vector<const CsiVolume*>& volumes() const { return volumes_; }
  std::map<std::string, std::unique_ptr<vmtest::Writer>>& writers() { return writers_; }

  // Creates each image, stages and publishes it through `node` as kubelet
  // would (it makes the directories first) and starts its writer; fails the
  // test (ASSERT) on the first error.
  void StageAndPublish(csi::v1::Node::Stub& node);
  // Stops the writers, unpublishes and unstages each volume (EXPECTs
  // success) and removes its image.
  void UnpublishAndUnstage(csi::v1::Node::Stub& node);

  // The rbd-nbd pid serving each volume (0 when not exactly one).
  std::map<std::string, pid_t> ServerPids() const;
  // Forgets each writer's longest write (to measure one step's pause).
  void ResetWriters();
  // The longest write of any writer since ResetWriters(), seconds.
  double LongestWrite();
  // Every writer: writing again, no IO error; prints each one's longest
  // pause since ResetWriters(). A volume reports Connected before the write
  // the step held up has completed: this waits for it, so that its pause
  // counts in this step.
  void ExpectWritersUnharmed(const std::string& step);
  // Waits until every volume is Connected in /status; its entries then
  // (fewer than volumes() on timeout).
  std::map<std::string, vmtest::VolumeStatus> WaitConnected(std::chrono::milliseconds timeout);
  // After a daemon restart that left the children alive: same pids, adopted.
  void ExpectAdopted(const std::map<std::string, pid_t>& before, const std::string& step);

 private:
  vmtest::VmCeph& ceph_;
  int health_port_;
  std::vector<const CsiVolume*> volumes_;
  std::map<std::string, std::unique_ptr<vmtest::Writer>> writers_;
};

}  // namespace nbdk::systemdtest
