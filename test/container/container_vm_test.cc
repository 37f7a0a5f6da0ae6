// The node DaemonSet's container under podman, in the systemd VM (systemd
// is PID 1, as on a Kubernetes node): podman runs the image with the
// manifest's flags and mounts (daemonset_container.h); a CSI client out here
// stages and publishes an ext4 and a block volume through the socket on the
// host path, and writers out here write to both throughout. Then what
// happens to a node plugin, each with 0 IO errors and its figures (the
// longest single write, time back to ready, adopted or re-attached, pids):
//  1. podman restart;  2. podman kill -s KILL, then start;
//  3. an upgrade: the container replaced by one of an image with a new tag;
//  with child scopes every rbd-nbd outlives the container and is adopted
//  with the same pid;
//  4. --child-scopes=off: rbd-nbd lives in the container's cgroup and dies
//  with it; the next container re-attaches each on the same device.
// The tests run in order and build on each other (one node, one set of
// volumes); the last one unstages everything.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include "supervisor/child_scope.h"
#include "test/container/daemonset_container.h"
#include "test/systemd/systemd_vm_env.h"
#include "test/systemd/unit_control.h"
#include "test/systemd/written_volumes.h"

namespace nbdk::containertest {
namespace {

using namespace std::chrono_literals;
using systemdtest::CgroupOf;
using systemdtest::WaitUntil;
using systemdtest::WrittenVolumes;

constexpr char kName[] = "nbdkeeper-node";
constexpr char kNodeName[] = "nbdk-vm";

// Seconds since `start`.
double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The daemon's pid on the host (hostPID), 0 unless exactly one runs.
pid_t DaemonPid() {
  std::vector<pid_t> pids = vmtest::ProcessesOf("nbdkeeperd");
  return pids.size() == 1 ? pids[0] : 0;
}

std::string Pids(const std::map<std::string, pid_t>& pids) {
  std::string out;
  for (const auto& [image, pid] : pids) out += (out.empty() ? "" : ", ") + image + " " + std::to_string(pid);
  return out;
}

class NodeContainer : public systemdtest::SystemdVmTest {
 protected:
  // Whether the first test got the container serving both volumes.
  static bool& Serving() {
    static bool serving = false;
    return serving;
  }
  static const DaemonSetContainer& Spec() {
    static const DaemonSetContainer spec = [] {
      auto c = DaemonSetContainer::FromManifest(NBDK_SOURCE_DIR "/deploy/kubernetes/node-daemonset.yaml", kNodeName,
                                                std::filesystem::path(systemdtest::kCephCsiConfig).parent_path());
      if (!c.ok()) std::fprintf(stderr, "the DaemonSet's container: %s\n", c.status().ToString().c_str());
      return c.ok() ? *c : DaemonSetContainer{};
    }();
    return spec;
  }
  // Images of their own: the systemd VM's suites, before this one on the
  // same native cluster, leave theirs staged for a power cut.
  static WrittenVolumes& Staged() {
    static const systemdtest::CsiVolume ext4{"ct-ext4", false}, block{"ct-block", true};
    static WrittenVolumes staged(Ceph(), Spec().health_port, {&ext4, &block});
    return staged;
  }

  // Waits until the daemon in the container answers Probe as ready through
  // the socket on the host path; seconds, or -1.
  static double WaitReady(std::chrono::milliseconds timeout) {
    return WaitUntil(
        [] {
          csi::v1::ProbeResponse probe;
          grpc::ClientContext ctx;
          ctx.set_deadline(std::chrono::system_clock::now() + 2s);
          return systemdtest::IdentityStub(Spec().csi_endpoint)->Probe(&ctx, {}, &probe).ok() && probe.ready().value();
        },
        timeout);
  }

  // Stops and removes the container (SIGTERM first, as kubelet does), then
  // runs a new one of `image`: a pod replaced.
  static void Replace(const std::string& image, const std::vector<std::string>& extra_args = {}) {
    ASSERT_TRUE(Podman({"stop", "--time", "30", kName}).ok());
    ASSERT_TRUE(Podman({"rm", kName}).ok());
    Status s = Spec().Run(kName, image, extra_args);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // `action` done to the container with the volumes staged; then the daemon
  // must be ready again with every rbd-nbd adopted, the same pids, and the
  // writers unharmed. Prints the step's figures.
  static void ExpectAdoptedAfter(const std::string& step, const std::function<void()>& action) {
    auto before = Staged().ServerPids();
    for (const auto& [image, pid] : before) ASSERT_NE(pid, 0) << image;
    pid_t daemon_before = DaemonPid();
    Staged().ResetWriters();
    auto start = std::chrono::steady_clock::now();
    action();
    if (::testing::Test::HasFatalFailure()) return;
    ASSERT_GE(WaitReady(120s), 0) << step << ": the daemon is not ready again";
    double back = Since(start);
    Staged().ExpectAdopted(before, step);
    Staged().ExpectWritersUnharmed(step);
    std::printf(
        "[ %s ] ready again %.2f s after the action began; adopted, same rbd-nbd pids (%s); daemon pid "
        "%d -> %d; stall (longest write) %.2f s%s\n",
        step.c_str(), back, Pids(before).c_str(), daemon_before, DaemonPid(), Staged().LongestWrite(),
        Staged().LongestWrite() < 1.0 ? " (under 1 s)" : " (NOT under 1 s)");
  }
};

// The scenarios: each needs the volumes the first test staged.
class StagedNodeContainer : public NodeContainer {
 protected:
  void SetUp() override {
    NodeContainer::SetUp();
    if (!IsSkipped() && !Serving()) GTEST_SKIP() << "the container never served the volumes";
  }
};

TEST_F(NodeContainer, RunsAsTheDaemonSetSaysAndServesAnExt4AndABlockVolume) {
  ASSERT_FALSE(Spec().image.empty()) << "daemonset_podman.py failed";
  EXPECT_EQ(Spec().image, "localhost/nbdkeeperd:" NBDK_VERSION) << "the manifest runs another version";
  // The ceph-csi-config ConfigMap's contents, as kubelet projects them.
  std::filesystem::create_directories(std::filesystem::path(systemdtest::kCephCsiConfig).parent_path());
  ASSERT_TRUE(vmtest::WriteCephCsiConfig(systemdtest::kCephCsiConfig, systemdtest::kCluster, Ceph()).ok());
  auto start = std::chrono::steady_clock::now();
  Status s = Spec().Run(kName, Spec().image);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_GE(WaitReady(120s), 0) << "the daemon in the container did not become ready";
  std::printf("[ podman run ] %s ready after %.2f s, daemon pid %d, CSI socket %s\n", Spec().image.c_str(),
              Since(start), DaemonPid(), Spec().csi_endpoint.c_str());
  auto node = systemdtest::NodeStub(Spec().csi_endpoint);
  Staged().StageAndPublish(*node);
  if (HasFatalFailure()) return;
  // Each rbd-nbd in a scope of its own on the host, not in the container.
  for (const auto& [image, pid] : Staged().ServerPids()) {
    ASSERT_NE(pid, 0) << image;
    EXPECT_TRUE(CgroupOf(pid).ends_with("/" + ScopeUnitName(image))) << image << ": " << CgroupOf(pid);
  }
  Serving() = !HasFailure();
  // The control for the steps' stall figures: the same podman load on the
  // VM's two emulated CPUs, with no change to the node plugin.
  Staged().ResetWriters();
  ASSERT_TRUE(Podman({"run", "--rm", "--network=none", Spec().image, "--version"}).ok());
  std::printf("[ control: podman run --rm of another container ] longest write %.2f s\n", Staged().LongestWrite());
}

TEST_F(StagedNodeContainer, PodmanRestartAdoptsEveryRbdNbd) {
  ExpectAdoptedAfter("podman restart", [] { ASSERT_TRUE(Podman({"restart", kName}).ok()); });
}

TEST_F(StagedNodeContainer, PodmanKillThenStartAdoptsEveryRbdNbd) {
  ExpectAdoptedAfter("podman kill -s KILL; start", [] {
    ASSERT_TRUE(Podman({"kill", "--signal", "KILL", kName}).ok());
    ASSERT_TRUE(Podman({"wait", kName}).ok());
    ASSERT_TRUE(Podman({"start", kName}).ok());
  });
}

TEST_F(StagedNodeContainer, UpgradeToAnImageWithANewTagAdoptsEveryRbdNbd) {
  const char* upgrade = std::getenv("NBDK_UPGRADE_IMAGE");
  ASSERT_TRUE(upgrade && *upgrade) << "NBDK_UPGRADE_IMAGE names the new tag (test/container/CMakeLists.txt)";
  ExpectAdoptedAfter(std::string("upgrade to ") + upgrade, [&] { Replace(upgrade); });
  auto image = Podman({"inspect", "--format", "{{.ImageName}}", kName});
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(*image, std::string(upgrade) + "\n");
}

// Without child scopes each rbd-nbd is in the container's cgroup: killing
// the container kills it, and the next daemon re-attaches every device.
TEST_F(StagedNodeContainer, WithoutScopesAKilledContainerTakesRbdNbdAlongAndTheyAreReattached) {
  ExpectAdoptedAfter("replaced with --child-scopes=off", [] { Replace(Spec().image, {"--child-scopes=off"}); });
  if (HasFatalFailure()) return;
  // The adopted rbd-nbd are still in their scopes: kill each, so that the
  // daemon re-attaches it in its own cgroup, the container's.
  auto adopted = Staged().ServerPids();
  for (const auto& [image, pid] : adopted) ASSERT_EQ(::kill(pid, SIGKILL), 0) << image;
  Staged().ResetWriters();
  auto start = std::chrono::steady_clock::now();
  std::map<std::string, vmtest::VolumeStatus> now;
  WaitUntil(
      [&] {
        now = Staged().WaitConnected(0ms);  // one look at /status
        if (now.size() != adopted.size()) return false;
        for (const auto& [image, s] : now) {
          if (s.pid == adopted.at(image)) return false;
        }
        return true;
      },
      120s);
  ASSERT_EQ(now.size(), adopted.size()) << "not every rbd-nbd re-attached after kill -9";
  std::printf("[ kill -9 of each rbd-nbd, no scopes ] re-attached in %.2f s\n", Since(start));
  Staged().ExpectWritersUnharmed("kill -9 of each rbd-nbd, no scopes");
  auto before = Staged().ServerPids();
  for (const auto& [image, pid] : before) {
    ASSERT_NE(pid, 0) << image;
    EXPECT_NE(CgroupOf(pid).find("/libpod-"), std::string::npos)
        << image << " not in the container's cgroup: " << CgroupOf(pid);
  }

  Staged().ResetWriters();
  start = std::chrono::steady_clock::now();
  ASSERT_TRUE(Podman({"kill", "--signal", "KILL", kName}).ok());
  ASSERT_TRUE(Podman({"wait", kName}).ok());
  double died = WaitUntil(
      [&] {
        for (const auto& [image, pid] : before) {
          if (::kill(pid, 0) == 0) return false;
        }
        return true;
      },
      30s);
  EXPECT_GE(died, 0) << "an rbd-nbd outlived the container without scopes";
  ASSERT_TRUE(Podman({"start", kName}).ok());
  ASSERT_GE(WaitReady(120s), 0) << "the daemon is not ready again";
  double ready = Since(start);
  auto after = Staged().WaitConnected(120s);
  ASSERT_EQ(after.size(), before.size()) << "not every volume re-attached";
  double connected = Since(start);
  for (const auto& [image, s] : after) {
    EXPECT_NE(s.pid, before.at(image)) << image << ": the same rbd-nbd, not re-attached";
    EXPECT_EQ(s.device, now.at(image).device) << image << ": another device";
    EXPECT_FALSE(s.adopted) << image;
  }
  Staged().ExpectWritersUnharmed("podman kill -s KILL; start, no scopes");
  std::printf(
      "[ podman kill -s KILL; start, no scopes ] rbd-nbd died with the container; ready again %.2f s, every "
      "volume re-attached on its device %.2f s after the kill; pids (%s) -> (%s); stall (longest write) "
      "%.2f s\n",
      ready, connected, Pids(before).c_str(), Pids(Staged().ServerPids()).c_str(), Staged().LongestWrite());
}

TEST_F(StagedNodeContainer, UnstagesEverythingAndLeavesNoScope) {
  auto node = systemdtest::NodeStub(Spec().csi_endpoint);
  Staged().UnpublishAndUnstage(*node);
  auto scopes = systemdtest::Systemctl({"list-units", "--all", "--no-legend", "--plain", "nbdkeeper-rbd-nbd-*"});
  ASSERT_TRUE(scopes.ok());
  EXPECT_EQ(*scopes, "") << "scopes left after the unstage";
  EXPECT_TRUE(Podman({"stop", "--time", "30", kName}).ok());
  EXPECT_TRUE(Podman({"rm", kName}).ok());
}

}  // namespace
}  // namespace nbdk::containertest
