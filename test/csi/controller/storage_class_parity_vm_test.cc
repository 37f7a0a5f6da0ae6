// More of ceph-csi's StorageClass parameters against the VM's real Ceph,
// through nbdkeeperd, each observed where an operator would look: a data
// pool kept by a snapshot, a restore and a clone (an erasure-coded one:
// topology_vm_test.cc) (`rbd info`, `rados ls`);
// the QoS limits as the image's librbd settings (`rbd config image list`)
// and ceph-csi's saved keys (`rbd image-meta list`), computed again when
// the volume grows; mkfsOptions in the filesystem the first stage made
// (`dumpe2fs`); every imageFeatures feature on the image; no PVC/PV names
// with --setmetadata=false; unknown volume context keys refused by the Node.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "journal/volume_id.h"
#include "test/csi/controller/controller_vm_helpers.h"
#include "test/csi/controller/rbd_cli.h"
#include "test/csi/controller/storage_class_vm_fixture.h"

namespace nbdk::vmtest {
namespace {

using Code = grpc::StatusCode;
constexpr int64_t kGiB = int64_t{1} << 30;

std::map<std::string, std::string> ImageMeta(const std::string& image) {
  rapidjson::Document meta = RbdJson({"image-meta", "list", Ceph().pool + "/" + image});
  std::map<std::string, std::string> out;
  if (meta.IsObject()) {
    for (const auto& m : meta.GetObject()) out[m.name.GetString()] = m.value.GetString();
  }
  return out;
}

// `rbd config image list`: the settings the image itself sets (source
// "image"), by name.
std::map<std::string, std::string> ImageConfig(const std::string& image) {
  rapidjson::Document config = RbdJson({"config", "image", "list", Ceph().pool + "/" + image});
  std::map<std::string, std::string> out;
  if (!config.IsArray()) return out;
  for (const auto& c : config.GetArray()) {
    if (std::string(c["source"].GetString()) == "image") out[c["name"].GetString()] = c["value"].GetString();
  }
  return out;
}

TEST_F(StorageClassVmTest, DataPoolIsKeptBySnapshotsRestoresAndClones) {
  const char* data_pool = std::getenv("NBDK_CEPH_DATA_POOL");
  ASSERT_NE(data_pool, nullptr) << "test/vm/ceph-up.sh's second pool";
  ExpectDataPoolKept(data_pool, "replicated");
}

TEST_F(StorageClassVmTest, QosLimitsAreTheImagesLibrbdSettings) {
  const std::string name = "pvc-qos-" + std::to_string(::getpid());
  const Params qos = {{"baseReadIops", "1000"}, {"baseWriteBps", "4194304"},
                      {"baseIops", "500"},      {"iopsPerGiB", "100"},
                      {"maxIops", "2000"},      {"baseVolSizeBytes", std::to_string(kGiB)}};
  csi::v1::CreateVolumeResponse created, cloned;
  ASSERT_GRPC_OK(Create(name, kGiB, qos, &created));
  const std::string image = ImageOf(created);
  EXPECT_EQ(ImageConfig(image), (std::map<std::string, std::string>{{"rbd_qos_read_iops_limit", "1000"},
                                                                    {"rbd_qos_write_bps_limit", "4194304"},
                                                                    {"rbd_qos_iops_limit", "500"}}));
  auto meta = ImageMeta(image);
  EXPECT_EQ(meta["rbd_base_qos_iops_limit"], "500");
  EXPECT_EQ(meta["rbd_iops_per_gib_limit"], "100");
  EXPECT_EQ(meta["rbd_max_qos_iops_limit"], "2000");
  EXPECT_EQ(meta["rbd_base_qos_vol_size"], std::to_string(kGiB));
  EXPECT_EQ(meta["rbd_base_qos_read_iops_limit"], "1000");

  // Two GiB above the base size: 500 + 2 * 100.
  ASSERT_GRPC_OK(Expand(created.volume().volume_id(), 3 * kGiB));
  EXPECT_EQ(ImageConfig(image)["rbd_qos_iops_limit"], "700");

  // A clone that asks for none keeps its source's (librbd copies the
  // metadata); one that asks for its own gets them.
  ASSERT_GRPC_OK(
      CreateFrom(name + "-clone", 3 * kGiB, created.volume().volume_id(), false, {{"baseReadIops", "10"}}, &cloned));
  auto clone_config = ImageConfig(ImageOf(cloned));
  EXPECT_EQ(clone_config["rbd_qos_read_iops_limit"], "10");
  EXPECT_EQ(clone_config["rbd_qos_write_bps_limit"], "4194304");

  csi::v1::CreateVolumeResponse refused;
  grpc::Status s = Create(name + "-bad", 64 * kMiB, Params{{"baseIops", "-1"}}, &refused);
  EXPECT_EQ(s.error_code(), Code::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("parameters.baseIops"), std::string::npos) << s.error_message();
  ASSERT_GRPC_OK(Delete(cloned.volume().volume_id()));
  ASSERT_GRPC_OK(Delete(created.volume().volume_id()));
}

// dumpe2fs's "<field>:   <value>" line; "" when absent.
std::string Dumpe2fsField(const std::string& text, const std::string& field) {
  const std::string lines = "\n" + text;
  size_t at = lines.find("\n" + field + ":");
  if (at == std::string::npos) return "";
  size_t start = lines.find_first_not_of(' ', at + field.size() + 2);
  return start == std::string::npos ? "" : lines.substr(start, lines.find('\n', start) - start);
}

TEST_F(StorageClassVmTest, MkfsOptionsMakeTheFirstStagesFilesystem) {
  const std::string name = "pvc-mkfs-" + std::to_string(::getpid());
  csi::v1::CreateVolumeResponse created, refused;
  grpc::Status bad = Create(name + "-bad", 64 * kMiB, Params{{"mkfsOptions", "-d /etc"}}, &refused);
  EXPECT_EQ(bad.error_code(), Code::INVALID_ARGUMENT);
  EXPECT_NE(bad.error_message().find("mkfsOptions: '-d' is not an option"), std::string::npos) << bad.error_message();

  ASSERT_GRPC_OK(Create(name, 64 * kMiB, Params{{"mkfsOptions", "-m 5 -L nbdkdata -O ^metadata_csum"}}, &created));
  const std::string& volume_id = created.volume().volume_id();
  EXPECT_EQ(created.volume().volume_context().at("mkfsOptions"), "-m 5 -L nbdkdata -O ^metadata_csum");
  csi::v1::NodeStageVolumeRequest stage = StageAsCreated(created);

  // The Node checks them again: what the Controller would refuse is never run.
  auto hostile = stage;
  (*hostile.mutable_volume_context())["mkfsOptions"] = "-z /tmp/undo";
  grpc::Status s = Stage(hostile);
  EXPECT_EQ(s.error_code(), Code::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("volume_context: mkfsOptions: '-z'"), std::string::npos) << s.error_message();
  EXPECT_EQ(RbdNbdProcessesFor(ImageOf(created)), 0);

  ASSERT_GRPC_OK(Stage(stage));
  auto dumped = RunCommand({"dumpe2fs", "-h", StatusField(volume_id, "device")});
  ASSERT_TRUE(dumped.ok() && dumped->exit.code == 0);
  const std::string& text = dumped->stdout_text;
  EXPECT_EQ(Dumpe2fsField(text, "Filesystem volume name"), "nbdkdata");
  EXPECT_EQ(Dumpe2fsField(text, "Filesystem features").find("metadata_csum"), std::string::npos) << text;
  const std::string blocks_text = Dumpe2fsField(text, "Block count");
  const std::string reserved_text = Dumpe2fsField(text, "Reserved block count");
  ASSERT_FALSE(blocks_text.empty() || reserved_text.empty()) << text;
  const double blocks = std::stod(blocks_text), reserved = std::stod(reserved_text);
  EXPECT_NEAR(reserved / blocks, 0.05, 0.005) << text;  // ceph-csi's default would be -m0
  ASSERT_GRPC_OK(Unstage(volume_id));
  ASSERT_GRPC_OK(Delete(volume_id));
}

TEST_F(StorageClassVmTest, EveryImageFeatureCephCsiAcceptsIsOnTheImage) {
  const std::string name = "pvc-feat-" + std::to_string(::getpid());
  const std::vector<std::string> all = {"layering",  "exclusive-lock", "object-map",
                                        "fast-diff", "deep-flatten",   "journaling"};
  std::string csv;
  for (const auto& f : all) csv += (csv.empty() ? "" : ",") + f;
  csi::v1::CreateVolumeResponse created, plain, refused;
  ASSERT_GRPC_OK(Create(name, 64 * kMiB, Params{{"imageFeatures", csv}}, &created));
  std::vector<std::string> features = InfoOf(ImageOf(created)).features;
  for (const auto& f : all) EXPECT_NE(std::find(features.begin(), features.end(), f), features.end()) << f;
  ASSERT_GRPC_OK(Create(name + "-plain", 64 * kMiB, Params{{"imageFeatures", "layering"}}, &plain));
  EXPECT_EQ(InfoOf(ImageOf(plain)).features, std::vector<std::string>{"layering"});
  for (const char* bad : {"layering,striping", "", "object-map"}) {
    grpc::Status s = Create(name + "-bad", 64 * kMiB, Params{{"imageFeatures", bad}}, &refused);
    EXPECT_EQ(s.error_code(), Code::INVALID_ARGUMENT) << bad;
    EXPECT_NE(s.error_message().find("parameters.imageFeatures"), std::string::npos) << s.error_message();
  }
  ASSERT_GRPC_OK(Delete(plain.volume().volume_id()));
  ASSERT_GRPC_OK(Delete(created.volume().volume_id()));
}

// A second daemon with --setmetadata=false (ceph-csi's flag): the PVC/PV
// names the provisioner passes are not written.
TEST_F(StorageClassVmTest, SetMetadataFalseWritesNoPvcOrPvNames) {
  VmNode quiet("/run/nbdk-node-vm-nometa", "nometa-node");
  std::string error;
  ASSERT_TRUE(quiet.Start(true, {"--setmetadata=false"}, &error)) << error;
  // The fixture's calls go to it for this test (SetUp makes a stub per test).
  controller_ =
      csi::v1::Controller::NewStub(grpc::CreateChannel(quiet.daemon().endpoint(), grpc::InsecureChannelCredentials()));
  const std::string name = "pvc-nometa-" + std::to_string(::getpid());
  csi::v1::CreateVolumeResponse created;
  ASSERT_GRPC_OK(Create(name, 64 * kMiB,
                        Params{{"csi.storage.k8s.io/pvc/name", "data"},
                               {"csi.storage.k8s.io/pvc/namespace", "db"},
                               {"csi.storage.k8s.io/pv/name", name},
                               {"baseReadIops", "100"}},
                        &created));
  // QoS is the image's own setting, not the names --setmetadata is about.
  auto meta = ImageMeta(ImageOf(created));
  for (const char* key :
       {"csi.storage.k8s.io/pvc/name", "csi.storage.k8s.io/pvc/namespace", "csi.storage.k8s.io/pv/name"}) {
    EXPECT_FALSE(meta.contains(key)) << key;
  }
  EXPECT_EQ(meta["conf_rbd_qos_read_iops_limit"], "100");
  ASSERT_GRPC_OK(Delete(created.volume().volume_id()));
  quiet.Stop();
}

// The Node's volume context allow-list, on the real daemon: an unknown key
// is refused by name before anything is mapped; ceph-csi's whole
// StorageClass (its Controller's volume context) is accepted.
TEST_F(StorageClassVmTest, UnknownVolumeContextKeysAreRefusedByTheNode) {
  const std::string name = "pvc-ctxkeys-" + std::to_string(::getpid());
  csi::v1::CreateVolumeResponse created;
  ASSERT_GRPC_OK(Create(name, 64 * kMiB, Params{}, &created));
  const std::string& volume_id = created.volume().volume_id();
  csi::v1::NodeStageVolumeRequest stage = StageAsCreated(created);
  auto unknown = stage;
  (*unknown.mutable_volume_context())["fooBar"] = "1";
  grpc::Status s = Stage(unknown);
  EXPECT_EQ(s.error_code(), Code::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("volume_context.fooBar: not a key nbdkeeper knows"), std::string::npos)
      << s.error_message();
  EXPECT_EQ(RbdNbdProcessesFor(ImageOf(created)), 0);

  for (const auto& [k, v] : Params{{"imageFeatures", "layering"},
                                   {"thickProvision", "false"},
                                   {"topologyConstrainedPools", "[]"},
                                   {"cephLogStrategy", "remove"},
                                   {"baseIops", "100"},
                                   {"csi.storage.k8s.io/pv/name", name}}) {
    (*stage.mutable_volume_context())[k] = v;
  }
  ASSERT_GRPC_OK(Stage(stage));
  ASSERT_GRPC_OK(Unstage(volume_id));
  ASSERT_GRPC_OK(Delete(volume_id));
}

}  // namespace
}  // namespace nbdk::vmtest
