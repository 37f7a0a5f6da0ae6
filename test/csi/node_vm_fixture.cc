#include "test/csi/node_vm_fixture.h"

#include <signal.h>

#include <cstdio>

namespace nbdk::vmtest {

std::unique_ptr<VmNode> NodeVmTest::node_;

namespace {

// Stops the shared daemon once, after every suite ran (gtest owns it).
class DaemonEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { NodeVmTest::StopDaemon(); }
};
const auto* const kDaemonEnvironment = ::testing::AddGlobalTestEnvironment(new DaemonEnvironment);

}  // namespace

std::vector<std::string> NodeVmTest::DaemonFlags(int reattach_timeout_s) {
  return {"--reattach-timeout=" + std::to_string(reattach_timeout_s), "--node-labels=" + std::string(kNodeLabels),
          "--domain-labels=topology.kubernetes.io/region,topology.kubernetes.io/zone"};
}

void NodeVmTest::SetUpTestSuite() {
  if (node_) return;  // shared by every suite of the binary
  node_ = std::make_unique<VmNode>(Root(), "test-node");
  std::string error;
  ASSERT_TRUE(node_->Start(true, DaemonFlags(kReattachTimeoutS), &error)) << error;
}

void NodeVmTest::RestartDaemon(int reattach_timeout_s) {
  node_->daemon().Stop(SIGKILL);
  std::string error;
  ASSERT_TRUE(node_->Start(false, DaemonFlags(reattach_timeout_s), &error)) << error;
}

void NodeVmTest::StopDaemon() {
  if (!node_) return;
  int st = node_->Stop();
  const bool clean = WIFEXITED(st) && WEXITSTATUS(st) == 0;
  EXPECT_TRUE(clean) << "nbdkeeperd: " << test::DescribeWaitStatus(st);
  if (::testing::UnitTest::GetInstance()->failed_test_count() > 0 || !clean) {
    // Its end, where a crash's report is; the whole log would be cut by
    // CTest's limit on a test's output, and that keeps the head.
    constexpr size_t kTail = 150;
    std::fprintf(stderr, "--- the last %zu lines of nbdkeeperd's log (%s) ---\n%s\n", kTail,
                 node_->daemon().log_path().c_str(), node_->daemon().LogTail(kTail).c_str());
  }
  node_.reset();
}

void NodeVmTest::CreateImage(const std::string& name, int mib) {
  std::string error;
  ASSERT_TRUE(CreateTestImage(name, mib, &error)) << error;
}

}  // namespace nbdk::vmtest
