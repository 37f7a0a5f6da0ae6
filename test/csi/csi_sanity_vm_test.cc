// The real CSI sanity suite: csi-test's own csi-sanity binary (v5.4.0, the
// path CMake's NBDK_CSI_SANITY names) against the real nbdkeeperd, serving
// Identity, Controller and Node on one socket, on real Ceph. Its "Node
// Service" specs stage and publish, so they run in the VM; the rest
// (Identity, Controller, snapshots) need no guest kernel and run on the
// native test cluster. Every spec the suite runs for what nbdkeeper
// advertises must pass; the suite's own output is printed whole, so a
// failing spec names itself.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>

#include "test/common/vm_command.h"
#include "test/csi/node_vm_fixture.h"

namespace nbdk::vmtest {
namespace {

// The secrets file: the cephx user and key for every call that takes
// secrets (csi-test's CSISecrets keys).
std::string SecretsYaml() {
  static const char* const kCalls[] = {
      "CreateVolumeSecret",
      "DeleteVolumeSecret",
      "ControllerPublishVolumeSecret",
      "ControllerUnpublishVolumeSecret",
      "ControllerValidateVolumeCapabilitiesSecret",
      "NodeStageVolumeSecret",
      "NodePublishVolumeSecret",
      "CreateSnapshotSecret",
      "DeleteSnapshotSecret",
      "ControllerExpandVolumeSecret",
      "NodeExpandVolumeSecret",
      "ListSnapshotsSecret",
  };
  std::string yaml;
  for (const char* call : kCalls) {
    yaml += std::string(call) + ":\n  userID: \"" + Ceph().user + "\"\n  userKey: \"" + Ceph().key + "\"\n";
  }
  return yaml;
}

class CsiSanitySuite : public NodeVmTest {
 protected:
  // Mode 0600, as every file holding a key.
  static void WritePrivate(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
    ::chmod(path.c_str(), 0600);
  }

  // Runs the suite's specs that `ginkgo_filter` selects and checks that every
  // one that ran passed, and that at least `min_specs` ran.
  void RunSanity(const std::string& ginkgo_filter, int min_specs) {
    ASSERT_TRUE(std::filesystem::exists(NBDK_CSI_SANITY))
        << NBDK_CSI_SANITY << " is missing: csi-sanity is built from kubernetes-csi/csi-test v5.4.0's cmd/csi-sanity "
        << "(see docs/testing.md, \"CSI sanity expectations\"); configure with -DNBDK_CSI_SANITY=<path> to use "
           "another copy";
    const std::string dir = Root() + "/csi-sanity";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    WritePrivate(dir + "/secrets.yaml", SecretsYaml());
    // The StorageClass parameters of the suite's volumes, and its snapshots'.
    WritePrivate(dir + "/volume-parameters.yaml", "clusterID: test\npool: " + Ceph().pool + "\n");
    WritePrivate(dir + "/snapshot-parameters.yaml", "clusterID: test\n");

    // Staging and mount paths lie beneath the daemon's --csi-root (its
    // root), where it accepts them; the suite makes and removes them itself.
    auto start = std::chrono::steady_clock::now();
    auto child = SpawnedChild::Spawn(
        {NBDK_CSI_SANITY, "-csi.endpoint=" + Daemon().endpoint(), "-csi.stagingdir=" + dir + "/staging",
         "-csi.mountdir=" + dir + "/mount", "-csi.secrets=" + dir + "/secrets.yaml",
         "-csi.testvolumeparameters=" + dir + "/volume-parameters.yaml",
         "-csi.testsnapshotparameters=" + dir + "/snapshot-parameters.yaml", "-csi.testvolumesize=67108864",
         "-csi.testvolumeexpandsize=134217728", "-ginkgo.no-color", "-ginkgo.timeout=8m", ginkgo_filter},
        /*merge_stderr=*/true);
    ASSERT_TRUE(child.ok()) << child.status().ToString();
    // Within CTest's timeout (600 s), so that a hang still prints the suite's output.
    auto read = child->ReadToEnd(std::chrono::minutes(9));
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    auto exit = child->Wait(std::chrono::seconds(30));
    ASSERT_TRUE(exit.ok()) << exit.status().ToString();
    const std::string& out = *read;
    std::printf("%s\n", out.c_str());
    std::printf("csi-sanity took %.1f s\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());

    // "Ran 61 of 92 Specs in ..." and "SUCCESS! -- 61 Passed | 0 Failed | ...".
    std::smatch ran, tally;
    ASSERT_TRUE(std::regex_search(out, ran, std::regex(R"(Ran (\d+) of (\d+) Specs)"))) << "no summary";
    ASSERT_TRUE(std::regex_search(out, tally, std::regex(R"((\d+) Passed \| (\d+) Failed)"))) << "no tally";
    EXPECT_EQ(exit->code, 0) << exit->ToString();
    EXPECT_EQ(tally[2].str(), "0") << "failed specs";
    EXPECT_EQ(tally[1].str(), ran[1].str()) << "every spec that ran passed";
    EXPECT_GE(std::stoi(ran[1].str()), min_specs) << "the suite ran too few specs: a capability went missing";
  }
};

constexpr char kNodeSpecs[] = "Node Service";

TEST_F(CsiSanitySuite, NodeSpecsPass) { RunSanity(std::string("-ginkgo.focus=") + kNodeSpecs, 23); }

TEST_F(CsiSanitySuite, IdentityAndControllerSpecsPass) { RunSanity(std::string("-ginkgo.skip=") + kNodeSpecs, 40); }

}  // namespace
}  // namespace nbdk::vmtest
