// ceph-csi's StorageClass parameters against the VM's real Ceph, through
// nbdkeeperd: what CreateVolume honours is what the rbd CLI then sees on
// the image (data pool, object size, striping, name prefix, the PVC/PV
// names as image metadata); what it does not is refused by name.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "journal/volume_id.h"
#include "test/csi/controller/controller_vm_fixture.h"
#include "test/csi/controller/controller_vm_helpers.h"
#include "test/csi/controller/rbd_cli.h"

namespace nbdk::vmtest {
namespace {

TEST_F(ControllerVmTest, StorageClassLayoutAndPvcNamesAreTheImages) {
  const char* data_pool = std::getenv("NBDK_CEPH_DATA_POOL");
  ASSERT_NE(data_pool, nullptr) << "test/vm/ceph-up.sh's second pool";
  const std::string name = "pvc-sc-" + std::to_string(::getpid());
  const std::map<std::string, std::string> params = {
      {"dataPool", data_pool},
      {"objectSize", "1048576"},
      {"stripeUnit", "65536"},
      {"stripeCount", "4"},
      {"volumeNamePrefix", "k8s-vol-"},
      {"csi.storage.k8s.io/pvc/name", "data"},
      {"csi.storage.k8s.io/pvc/namespace", "db"},
      {"csi.storage.k8s.io/pv/name", name},
      {"csi.storage.k8s.io/fstype", "ext4"},
  };
  csi::v1::CreateVolumeResponse created, again;
  ASSERT_GRPC_OK(Create(name, 64 * kMiB, params, &created));
  ASSERT_GRPC_OK(Create(name, 64 * kMiB, params, &again));
  EXPECT_EQ(again.volume().volume_id(), created.volume().volume_id());
  auto id = DecodeVolumeId(created.volume().volume_id());
  ASSERT_TRUE(id.ok());
  const std::string image = "k8s-vol-" + id->object_uuid;
  const auto& ctx = created.volume().volume_context();
  ASSERT_TRUE(ctx.contains("imageName") && ctx.contains("dataPool"));
  EXPECT_EQ(ctx.at("imageName"), image);
  EXPECT_EQ(ctx.at("dataPool"), data_pool);
  EXPECT_FALSE(ctx.contains("csi.storage.k8s.io/pvc/name"));
  // ceph-csi's journal records neither the data pool nor the layout.
  auto per_volume = AllOmap(*io_, "csi.volume." + id->object_uuid);
  ASSERT_TRUE(per_volume);
  EXPECT_EQ(*per_volume, (std::map<std::string, std::string>{{"csi.volname", name}, {"csi.imagename", image}}));

  const std::string spec = Ceph().pool + "/" + image;
  rapidjson::Document info = RbdJson({"info", spec});
  ASSERT_TRUE(info.IsObject());
  ASSERT_TRUE(info.HasMember("data_pool")) << "no data pool";
  EXPECT_EQ(std::string(info["data_pool"].GetString()), data_pool);
  EXPECT_EQ(info["object_size"].GetUint64(), 1u << 20);
  EXPECT_EQ(info["order"].GetInt(), 20);
  EXPECT_EQ(info["stripe_unit"].GetUint64(), 64u << 10);
  EXPECT_EQ(info["stripe_count"].GetUint64(), 4u);
  std::vector<std::string> features;
  for (const auto& f : info["features"].GetArray()) features.emplace_back(f.GetString());
  // librbd's own for the layout, and the StorageClass's default list.
  for (const char* want : {"data-pool", "striping", "layering", "exclusive-lock", "object-map", "fast-diff"}) {
    EXPECT_NE(std::find(features.begin(), features.end(), want), features.end()) << want;
  }

  rapidjson::Document meta = RbdJson({"image-meta", "list", spec});
  ASSERT_TRUE(meta.IsObject());
  std::map<std::string, std::string> metadata;
  for (const auto& m : meta.GetObject()) metadata[m.name.GetString()] = m.value.GetString();
  EXPECT_EQ(metadata, (std::map<std::string, std::string>{{"csi.storage.k8s.io/pvc/name", "data"},
                                                          {"csi.storage.k8s.io/pvc/namespace", "db"},
                                                          {"csi.storage.k8s.io/pv/name", name}}));

  // The data lands in the data pool; the image pool keeps the header.
  ASSERT_TRUE(WriteImage(*io_, image, 0, std::string(4096, 'x')));
  const std::string data_prefix = std::string(info["block_name_prefix"].GetString()) + ".";
  auto has_data = [&](const std::vector<std::string>& objects) {
    return std::any_of(objects.begin(), objects.end(),
                       [&](const std::string& o) { return o.starts_with(data_prefix); });
  };
  EXPECT_TRUE(has_data(RadosLs(data_pool)));
  EXPECT_FALSE(has_data(RadosLs(Ceph().pool)));

  ASSERT_GRPC_OK(Delete(created.volume().volume_id()));
  EXPECT_FALSE(ImageExists(*io_, image));
}

TEST_F(ControllerVmTest, StorageClassParametersNotHonouredAreRefusedByName) {
  const std::string name = "pvc-sc-refused-" + std::to_string(::getpid());
  const std::pair<const char*, const char*> refused[] = {
      {"fooBar", "not a parameter nbdkeeper knows"},
      {"thickProvision", "not supported"},
      {"snapshotNamePrefix", "not supported"},
      {"topologyConstrainedPools", "expected a non-empty JSON array"},  // honoured, but "true" is no JSON array
      {"cephLogDir", "not supported"},
  };
  for (const auto& [param, why] : refused) {
    csi::v1::CreateVolumeResponse resp;
    grpc::Status s = Create(name, 16 * kMiB, {{param, "true"}}, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << param;
    EXPECT_NE(s.error_message().find(std::string("parameters.") + param + ": " + why), std::string::npos)
        << s.error_message();
  }
  // A data pool that does not exist is named, and nothing is reserved.
  csi::v1::CreateVolumeResponse resp;
  grpc::Status s = Create(name, 16 * kMiB, {{"dataPool", "no-such-pool"}}, &resp);
  EXPECT_NE(s.error_code(), grpc::StatusCode::OK);
  EXPECT_NE(s.error_message().find("parameters.dataPool"), std::string::npos) << s.error_message();
  auto dir = AllOmap(*io_, "csi.volumes.default");
  EXPECT_TRUE(!dir || !dir->contains("csi.volume." + name));
}

}  // namespace
}  // namespace nbdk::vmtest
