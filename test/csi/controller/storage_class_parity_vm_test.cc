// More of ceph-csi's StorageClass parameters against the VM's real Ceph,
// through nbdkeeperd, each observed where an operator would look: a data
// pool kept by a snapshot, a restore and a clone (`rbd info`, `rados ls`);
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
#include "test/csi/controller/controller_vm_fixture.h"
#include "test/csi/controller/controller_vm_helpers.h"
#include "test/csi/controller/rbd_cli.h"

namespace nbdk::vmtest {
namespace {

using Code = grpc::StatusCode;
using Params = std::map<std::string, std::string>;
constexpr int64_t kMiB = 1 << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

// `rbd info` of an image of the test pool: its data pool ("" when none)
// and the prefix of its data objects.
struct RbdInfo {
  std::string data_pool;
  std::string data_prefix;
  std::vector<std::string> features;
};
RbdInfo InfoOf(const std::string& image) {
  rapidjson::Document info = RbdJson({"info", Ceph().pool + "/" + image});
  RbdInfo out;
  if (!info.IsObject()) return out;
  if (info.HasMember("data_pool")) out.data_pool = info["data_pool"].GetString();
  out.data_prefix = std::string(info["block_name_prefix"].GetString()) + ".";
  for (const auto& f : info["features"].GetArray()) out.features.emplace_back(f.GetString());
  return out;
}

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

class StorageClassVmTest : public ControllerVmTest {
 protected:
  // CreateVolume of `bytes` from a snapshot (`snapshot`) or a volume ID.
  grpc::Status CreateFrom(const std::string& name, int64_t bytes, const std::string& source, bool snapshot,
                          const Params& params, csi::v1::CreateVolumeResponse* resp) {
    csi::v1::CreateVolumeRequest req = CreateRequest(name, bytes, params);
    if (snapshot) {
      req.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(source);
    } else {
      req.mutable_volume_content_source()->mutable_volume()->set_volume_id(source);
    }
    return Create(req, resp);
  }

  grpc::Status Expand(const std::string& volume_id, int64_t bytes) {
    csi::v1::ControllerExpandVolumeRequest req;
    req.set_volume_id(volume_id);
    req.mutable_capacity_range()->set_required_bytes(bytes);
    Secrets(&req);
    grpc::ClientContext ctx;
    csi::v1::ControllerExpandVolumeResponse resp;
    return controller_->ControllerExpandVolume(&ctx, req, &resp);
  }

  static std::string ImageOf(const csi::v1::CreateVolumeResponse& created) {
    return created.volume().volume_context().at("imageName");
  }

  // NodeStageVolume of an ext4 mount of `created` with the volume context
  // CreateVolume returned, as a CO sends it.
  csi::v1::NodeStageVolumeRequest StageAsCreated(const csi::v1::CreateVolumeResponse& created) {
    csi::v1::NodeStageVolumeRequest stage = StageReq(created.volume().volume_id(), MountCap("ext4"));
    stage.mutable_volume_context()->clear();
    for (const auto& [k, v] : created.volume().volume_context()) (*stage.mutable_volume_context())[k] = v;
    return stage;
  }

  // A volume with `data_pool` writes its data there; a snapshot, a restore
  // without dataPool and a clone with it keep it (ceph/rbd_clone.h
  // CloneImage), and each writes its own data there too.
  void ExpectDataPoolKept(const std::string& data_pool, const std::string& tag) {
    IoCtx& io = *io_;
    const std::string name = "pvc-dp-" + tag + "-" + std::to_string(::getpid());
    csi::v1::CreateVolumeResponse source, restored, cloned;
    ASSERT_GRPC_OK(Create(name, 64 * kMiB, Params{{"dataPool", data_pool}}, &source));
    const std::string image = source.volume().volume_context().at("imageName");
    auto id = DecodeVolumeId(source.volume().volume_id());
    ASSERT_TRUE(id.ok());
    // ceph-csi's journal keys; it records no data pool.
    auto per_volume = AllOmap(io, "csi.volume." + id->object_uuid);
    ASSERT_TRUE(per_volume);
    EXPECT_EQ(*per_volume, (std::map<std::string, std::string>{{"csi.volname", name}, {"csi.imagename", image}}));
    ASSERT_TRUE(WriteImage(io, image, 0, std::string(4096, 'x')));
    RbdInfo info = InfoOf(image);
    EXPECT_EQ(info.data_pool, data_pool);
    std::vector<std::string> prefixes = {info.data_prefix};

    std::string snapshot_id;
    ASSERT_GRPC_OK(Snapshot(name + "-snap", source.volume().volume_id(), &snapshot_id));
    auto snap = DecodeVolumeId(snapshot_id);
    ASSERT_TRUE(snap.ok());
    EXPECT_EQ(InfoOf("csi-snap-" + snap->object_uuid).data_pool, data_pool) << "snapshot image";

    ASSERT_GRPC_OK(CreateFrom(name + "-restore", 64 * kMiB, snapshot_id, true, {}, &restored));
    ASSERT_GRPC_OK(CreateFrom(name + "-clone", 64 * kMiB, source.volume().volume_id(), false,
                              {{"dataPool", data_pool}}, &cloned));
    for (const auto* made : {&restored, &cloned}) {
      const std::string copy = ImageOf(*made);
      EXPECT_EQ(ReadImage(io, copy, 0, 4096), std::string(4096, 'x')) << copy;
      ASSERT_TRUE(WriteImage(io, copy, 8 * kMiB, std::string(4096, 'y'))) << copy;
      RbdInfo copied = InfoOf(copy);
      EXPECT_EQ(copied.data_pool, data_pool) << copy;
      prefixes.push_back(copied.data_prefix);
    }
    // Each image's data objects are in the data pool, none in the image pool
    // (one `rados ls` of each: every CLI run costs seconds under TCG).
    const std::vector<std::string> in_data = RadosLs(data_pool), in_pool = RadosLs(Ceph().pool);
    for (const std::string& prefix : prefixes) {
      auto has = [&](const std::vector<std::string>& objects) {
        return std::any_of(objects.begin(), objects.end(), [&](const std::string& o) { return o.starts_with(prefix); });
      };
      EXPECT_TRUE(has(in_data)) << prefix;
      EXPECT_FALSE(has(in_pool)) << prefix;
    }
    ASSERT_GRPC_OK(Delete(cloned.volume().volume_id()));
    ASSERT_GRPC_OK(Delete(restored.volume().volume_id()));
    ASSERT_GRPC_OK(DeleteSnapshot(snapshot_id));
    ASSERT_GRPC_OK(Delete(source.volume().volume_id()));
    EXPECT_FALSE(ImageExists(io, image));
  }
};

TEST_F(StorageClassVmTest, DataPoolIsKeptBySnapshotsRestoresAndClones) {
  const char* data_pool = std::getenv("NBDK_CEPH_DATA_POOL");
  ASSERT_NE(data_pool, nullptr) << "test/vm/ceph-up.sh's second pool";
  ExpectDataPoolKept(data_pool, "replicated");
}

// The same on an erasure-coded data pool, where RBD needs allow_ec_overwrites.
// The VM's one-OSD cluster cannot host one (k=2, m=1 needs three OSDs): the
// test runs where the cluster names one in NBDK_CEPH_EC_DATA_POOL.
TEST_F(StorageClassVmTest, ErasureCodedDataPoolIsKeptBySnapshotsRestoresAndClones) {
  const char* ec_pool = std::getenv("NBDK_CEPH_EC_DATA_POOL");
  if (ec_pool == nullptr) GTEST_SKIP() << "no erasure-coded pool in this cluster (NBDK_CEPH_EC_DATA_POOL)";
  ExpectDataPoolKept(ec_pool, "ec");
}

TEST_F(StorageClassVmTest, QosLimitsAreTheImagesLibrbdSettings) {
  const std::string name = "pvc-qos-" + std::to_string(::getpid());
  const Params qos = {{"baseReadIops", "1000"},     {"baseWriteBps", "4194304"},
                      {"baseIops", "500"},          {"iopsPerGiB", "100"},
                      {"maxIops", "2000"},          {"baseVolSizeBytes", std::to_string(kGiB)}};
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
  const std::vector<std::string> all = {"layering",   "exclusive-lock", "object-map",
                                        "fast-diff",  "deep-flatten",   "journaling"};
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
  controller_ = csi::v1::Controller::NewStub(
      grpc::CreateChannel(quiet.daemon().endpoint(), grpc::InsecureChannelCredentials()));
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
  for (const char* key : {"csi.storage.k8s.io/pvc/name", "csi.storage.k8s.io/pvc/namespace",
                          "csi.storage.k8s.io/pv/name"}) {
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

  for (const auto& [k, v] : Params{{"imageFeatures", "layering"}, {"thickProvision", "false"},
                                   {"topologyConstrainedPools", "[]"}, {"cephLogStrategy", "remove"},
                                   {"baseIops", "100"}, {"csi.storage.k8s.io/pv/name", name}}) {
    (*stage.mutable_volume_context())[k] = v;
  }
  ASSERT_GRPC_OK(Stage(stage));
  ASSERT_GRPC_OK(Unstage(volume_id));
  ASSERT_GRPC_OK(Delete(volume_id));
}

}  // namespace
}  // namespace nbdk::vmtest
