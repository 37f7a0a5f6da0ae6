// The CSI Node VM tests' shared fixture: one real nbdkeeperd for the whole
// suite (a VmNode, test/csi/vm_node.h), driven over its unix socket by a
// real gRPC client, against the VM's one-node Ceph. Each test uses its own
// images and paths, so tests stay independent while sharing the daemon
// (starting one costs seconds).
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "csi/proto/csi.grpc.pb.h"
#include "test/common/daemon_process.h"
#include "test/csi/vm_node.h"

namespace nbdk::vmtest {

// EXPECT/ASSERT that a gRPC call succeeded, printing its error otherwise.
#define EXPECT_GRPC_OK(expr)                                                               \
  do {                                                                                     \
    grpc::Status s_ = (expr);                                                              \
    EXPECT_TRUE(s_.ok()) << #expr << ": " << s_.error_code() << " " << s_.error_message(); \
  } while (0)
#define ASSERT_GRPC_OK(expr)                                                               \
  do {                                                                                     \
    grpc::Status s_ = (expr);                                                              \
    ASSERT_TRUE(s_.ok()) << #expr << ": " << s_.error_code() << " " << s_.error_message(); \
  } while (0)

class NodeVmTest : public ::testing::Test {
 public:
  // Starts the one daemon all suites share; StopDaemon() runs once, after
  // the last suite (a global test environment).
  static void SetUpTestSuite();
  static void StopDaemon();
  // SIGKILLs the shared daemon alone (its rbd-nbd children serve on) and
  // starts it again on the same root with the suite's flags and
  // `reattach_timeout_s`, until /readyz; Node() is a new stub then.
  static void RestartDaemon(int reattach_timeout_s = kReattachTimeoutS);

 protected:
  static constexpr int kReattachTimeoutS = 60;
  // The node's labels (csi/topology.h): its region and zone are its
  // topology segments, its hostname the CRUSH host h2 that
  // test/vm/ceph-crush-hosts.py makes, for read affinity.
  static constexpr char kNodeLabels[] =
      "topology.kubernetes.io/region=east,topology.kubernetes.io/zone=z1,kubernetes.io/hostname=h2";
  static std::vector<std::string> DaemonFlags(int reattach_timeout_s);
  static std::string Root() { return "/run/nbdk-node-vm"; }
  static test::DaemonProcess& Daemon() { return node_->daemon(); }
  static std::unique_ptr<csi::v1::Node::Stub>& Node() { return node_->stub(); }

  // Creates an RBD image of `mib` MiB; fails the test on error.
  static void CreateImage(const std::string& name, int mib = 64);
  static csi::v1::VolumeCapability MountCap(const std::string& fs_type) { return MountCapability(fs_type); }
  static csi::v1::VolumeCapability BlockCap() { return BlockCapability(); }

  csi::v1::NodeStageVolumeRequest StageReq(const std::string& image, const csi::v1::VolumeCapability& cap) {
    return node_->StageReq(image, cap);
  }
  grpc::Status Stage(const csi::v1::NodeStageVolumeRequest& req) { return node_->Stage(req); }
  grpc::Status Unstage(const std::string& volume_id) { return node_->Unstage(volume_id); }
  grpc::Status Publish(const std::string& volume_id, const std::string& target, const csi::v1::VolumeCapability& cap,
                       bool read_only = false) {
    return node_->Publish(volume_id, target, cap, read_only);
  }
  grpc::Status Unpublish(const std::string& volume_id, const std::string& target) {
    return node_->Unpublish(volume_id, target);
  }
  csi::v1::NodeGetVolumeStatsResponse Stats(const std::string& volume_id, const std::string& path,
                                            grpc::Status* status) {
    return node_->Stats(volume_id, path, status);
  }

  static std::string StagingPath(const std::string& volume_id) { return node_->StagingPath(volume_id); }
  static std::string TargetPath(const std::string& volume_id, int n) { return node_->TargetPath(volume_id, n); }
  static std::string StatusOf(const std::string& volume_id) { return node_->StatusOf(volume_id); }
  static std::string StatusField(const std::string& volume_id, const std::string& field) {
    return node_->StatusField(volume_id, field);
  }

 private:
  static std::unique_ptr<VmNode> node_;
};

}  // namespace nbdk::vmtest
