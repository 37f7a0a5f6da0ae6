// The fixture of the StorageClass parameter VM tests: a Controller on the
// VM's nbdkeeperd (ControllerVmTest), CreateVolume from a source, and the
// check that a data pool is kept by snapshots, restores and clones.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "journal/volume_id.h"
#include "test/csi/controller/controller_vm_fixture.h"
#include "test/csi/controller/controller_vm_helpers.h"
#include "test/csi/controller/rbd_cli.h"

namespace nbdk::vmtest {

using Params = std::map<std::string, std::string>;
inline constexpr int64_t kOneMiB = int64_t{1} << 20;

// `rbd info` of an image of the test pool: its data pool ("" when none)
// and the prefix of its data objects.
struct RbdInfo {
  std::string data_pool;
  std::string data_prefix;
  std::vector<std::string> features;
};
inline RbdInfo InfoOf(const std::string& image) {
  rapidjson::Document info = RbdJson({"info", Ceph().pool + "/" + image});
  RbdInfo out;
  if (!info.IsObject()) return out;
  if (info.HasMember("data_pool")) out.data_pool = info["data_pool"].GetString();
  out.data_prefix = std::string(info["block_name_prefix"].GetString()) + ".";
  for (const auto& f : info["features"].GetArray()) out.features.emplace_back(f.GetString());
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
    ASSERT_GRPC_OK(Create(name, 64 * kOneMiB, Params{{"dataPool", data_pool}}, &source));
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

    ASSERT_GRPC_OK(CreateFrom(name + "-restore", 64 * kOneMiB, snapshot_id, true, {}, &restored));
    ASSERT_GRPC_OK(CreateFrom(name + "-clone", 64 * kOneMiB, source.volume().volume_id(), false,
                              {{"dataPool", data_pool}}, &cloned));
    for (const auto* made : {&restored, &cloned}) {
      const std::string copy = ImageOf(*made);
      EXPECT_EQ(ReadImage(io, copy, 0, 4096), std::string(4096, 'x')) << copy;
      ASSERT_TRUE(WriteImage(io, copy, 8 * kOneMiB, std::string(4096, 'y'))) << copy;
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

}  // namespace nbdk::vmtest
