// The CSI Node VM tests' shared fixture: one real nbdkeeperd for the whole
// suite, driven over its unix socket by a real gRPC client, against the
// VM's one-node Ceph. Each test uses its own images and paths, so tests stay
// independent while sharing the daemon (starting one costs seconds).
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "csi/proto/csi.grpc.pb.h"
#include "test/common/daemon_process.h"

namespace nbdk::vmtest {

// EXPECT/ASSERT that a gRPC call succeeded, printing its error otherwise.
#define EXPECT_GRPC_OK(expr)                                                      \
  do {                                                                            \
    grpc::Status s_ = (expr);                                                     \
    EXPECT_TRUE(s_.ok()) << #expr << ": " << s_.error_code() << " " << s_.error_message(); \
  } while (0)
#define ASSERT_GRPC_OK(expr)                                                      \
  do {                                                                            \
    grpc::Status s_ = (expr);                                                     \
    ASSERT_TRUE(s_.ok()) << #expr << ": " << s_.error_code() << " " << s_.error_message(); \
  } while (0)

// The VM harness's Ceph environment (test/vm/README.md).
struct CephEnv {
  std::string conf, pool, user, keyfile, key, monitors;
};
const CephEnv& Ceph();

class NodeVmTest : public ::testing::Test {
 public:
  // Starts the one daemon all suites share; StopDaemon() runs once, after
  // the last suite (a global test environment).
  static void SetUpTestSuite();
  static void StopDaemon();

 protected:
  static std::string Root() { return "/run/nbdk-node-vm"; }
  static test::DaemonProcess& Daemon() { return *daemon_; }
  static std::unique_ptr<csi::v1::Node::Stub>& Node() { return node_; }

  // Creates an RBD image of `mib` MiB; fails the test on error.
  static void CreateImage(const std::string& name, int mib = 64);
  static csi::v1::VolumeCapability MountCap(const std::string& fs_type);
  static csi::v1::VolumeCapability BlockCap();

  // A static-volume stage request (the volume id is the image name).
  csi::v1::NodeStageVolumeRequest StageReq(const std::string& image, const csi::v1::VolumeCapability& cap);
  grpc::Status Stage(const csi::v1::NodeStageVolumeRequest& req);
  grpc::Status Unstage(const std::string& volume_id);
  grpc::Status Publish(const std::string& volume_id, const std::string& target, const csi::v1::VolumeCapability& cap,
                       bool read_only = false);
  grpc::Status Unpublish(const std::string& volume_id, const std::string& target);
  csi::v1::NodeGetVolumeStatsResponse Stats(const std::string& volume_id, const std::string& path,
                                            grpc::Status* status);

  static std::string StagingPath(const std::string& volume_id) { return Root() + "/staging/" + volume_id; }
  static std::string TargetPath(const std::string& volume_id, int n) {
    return Root() + "/pods/" + volume_id + "-" + std::to_string(n);
  }
  // The daemon's /status entry for the volume (JSON text), or "".
  static std::string StatusOf(const std::string& volume_id);
  // A field of the volume's /status entry ("" when absent).
  static std::string StatusField(const std::string& volume_id, const std::string& field);
  static bool IsMounted(const std::string& path);
  // rbd-nbd processes serving `image` (from /proc cmdlines).
  static int RbdNbdProcessesFor(const std::string& image);

 private:
  static std::unique_ptr<test::DaemonProcess> daemon_;
  static std::unique_ptr<csi::v1::Node::Stub> node_;
};

}  // namespace nbdk::vmtest
