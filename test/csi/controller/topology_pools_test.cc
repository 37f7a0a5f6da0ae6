// A StorageClass's topologyConstrainedPools and the pool CreateVolume
// chooses for the topology it is asked for, by ceph-csi's rule.
#include "csi/controller/topology_pools.h"

#include <gtest/gtest.h>

#include "csi/controller/controller_request.h"

namespace nbdk {
namespace {

constexpr char kPools[] = R"([
  {"poolName": "east-1", "dataPool": "east-1-ec",
   "domainSegments": [{"domainLabel": "region", "value": "east"}, {"domainLabel": "zone", "value": "1"}]},
  {"poolName": "east-2",
   "domainSegments": [{"domainLabel": "region", "value": "east"}, {"domainLabel": "zone", "value": "2"}]},
  {"poolName": "west", "domainSegments": [{"domainLabel": "region", "value": "west"}]}])";

csi::v1::Topology Topology(std::map<std::string, std::string> segments) {
  csi::v1::Topology t;
  for (const auto& [k, v] : segments) (*t.mutable_segments())[k] = v;
  return t;
}

std::vector<TopologyConstrainedPool> Pools() {
  auto pools = ParseTopologyConstrainedPools(kPools);
  EXPECT_TRUE(pools.ok()) << pools.status().ToString();
  return pools.ok() ? *pools : std::vector<TopologyConstrainedPool>{};
}

TEST(TopologyPools, ParsesCephCsisExample) {
  auto pools = Pools();
  ASSERT_EQ(pools.size(), 3u);
  EXPECT_EQ(pools[0].pool, "east-1");
  EXPECT_EQ(pools[0].data_pool, "east-1-ec");
  EXPECT_EQ(pools[0].segments, (std::vector<std::pair<std::string, std::string>>{{"region", "east"}, {"zone", "1"}}));
  EXPECT_EQ(pools[1].data_pool, "");
  // Go matches a struct's keys ignoring case.
  auto folded = ParseTopologyConstrainedPools(R"([{"POOLNAME": "p", "domainsegments": []}])");
  ASSERT_TRUE(folded.ok()) << folded.status().ToString();
  EXPECT_EQ(folded->front().pool, "p");
}

TEST(TopologyPools, RefusalsNameTheEntryAndKey) {
  const std::pair<const char*, const char*> cases[] = {
      {"not json", "invalid JSON"},
      {"{}", "expected a non-empty JSON array"},
      {"[]", "expected a non-empty JSON array"},
      {R"([{"dataPool": "d"}])", "[0].poolName: missing"},
      {R"([{"poolName": "a/b"}])", "[0].poolName"},
      {R"([{"poolName": "p", "dataPool": 7}])", "[0].dataPool: expected a string"},
      {R"([{"poolName": "p"}, {"poolName": "q", "domainSegments": {}}])", "[1].domainSegments: expected an array"},
      {R"([{"poolName": "p", "domainSegments": [{"value": "x"}]}])", "domainSegments[0].domainLabel: missing"},
      {R"([{"poolName": "p", "domainSegments": [{"domainLabel": "zone", "value": 1}]}])",
       "domainSegments[0].value: expected a string"},
      {R"([{"poolName": "p", "pool": "q"}])", "[0].'pool': not a key of topologyConstrainedPools"},
      {R"([{"poolName": "p", "POOLNAME": "q"}])", "[0].poolName: given twice"},
      {R"([{"poolName": "p", "domainSegments": [{"domainLabel": "a", "value": "1", "value": "2"}]}])",
       "domainSegments[0].value: given twice"},
  };
  for (const auto& [json, field] : cases) {
    auto pools = ParseTopologyConstrainedPools(json);
    ASSERT_FALSE(pools.ok()) << json;
    EXPECT_EQ(pools.status().code(), Code::kInvalidArgument) << json;
    EXPECT_NE(pools.status().message().find(field), std::string::npos) << pools.status().message();
  }
}

TEST(TopologyPools, PreferredTopologiesComeFirstThenRequisite) {
  csi::v1::TopologyRequirement want;
  *want.add_requisite() = Topology({{"topology.rbd.nbdkeeper.io/region", "west"}});
  *want.add_preferred() = Topology({{"topology.rbd.nbdkeeper.io/region", "north"}});
  *want.add_preferred() =
      Topology({{"topology.rbd.nbdkeeper.io/region", "east"}, {"topology.rbd.nbdkeeper.io/zone", "2"}});
  auto choice = ChooseTopologyPool(Pools(), want);
  ASSERT_TRUE(choice.ok()) << choice.status().ToString();
  EXPECT_EQ(choice->pool, "east-2");
  EXPECT_EQ(choice->data_pool, "");
  EXPECT_EQ(choice->segments,
            (TopologySegments{{"topology.rbd.nbdkeeper.io/region", "east"}, {"topology.rbd.nbdkeeper.io/zone", "2"}}));

  want.clear_preferred();
  choice = ChooseTopologyPool(Pools(), want);
  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->pool, "west");
}

TEST(TopologyPools, APoolNeedsEveryOneOfItsSegments) {
  csi::v1::TopologyRequirement want;
  *want.add_requisite() = Topology({{"topology.rbd.nbdkeeper.io/zone", "1"}});  // no region
  auto choice = ChooseTopologyPool(Pools(), want);
  ASSERT_FALSE(choice.ok());
  EXPECT_EQ(choice.status().code(), Code::kResourceExhausted);
  EXPECT_NE(choice.status().message().find("east-1, east-2, west"), std::string::npos) << choice.status().message();
}

TEST(TopologyPools, ARestoreStaysInItsSnapshotsPool) {
  csi::v1::TopologyRequirement want;
  *want.add_preferred() = Topology({{"t/region", "east"}, {"t/zone", "1"}});
  *want.add_requisite() = Topology({{"t/region", "east"}, {"t/zone", "2"}});
  auto choice = ChooseTopologyPool(Pools(), want, "east-2");
  ASSERT_TRUE(choice.ok()) << choice.status().ToString();
  EXPECT_EQ(choice->pool, "east-2");
  auto none = ChooseTopologyPool(Pools(), want, "west");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("the source's pool 'west'"), std::string::npos) << none.status().message();
}

csi::v1::CreateVolumeRequest TopologyCreate() {
  csi::v1::CreateVolumeRequest r;
  r.set_name("pvc-topo");
  auto* cap = r.add_volume_capabilities();
  cap->mutable_mount()->set_fs_type("ext4");
  cap->mutable_access_mode()->set_mode(csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  (*r.mutable_parameters())["clusterID"] = "c";
  (*r.mutable_parameters())["topologyConstrainedPools"] = kPools;
  (*r.mutable_parameters())["dataPool"] = "sc-data";
  (*r.mutable_secrets())["userID"] = "u";
  (*r.mutable_secrets())["userKey"] = "AQBvdmRoAAAAABAAW0rGzGJuY1ZgAsBb0aVg2w==";
  return r;
}

// ceph-csi: the chosen pool is the image's and the journal's, its dataPool
// (even none) the image's data pool, the topology the volume's.
TEST(TopologyPools, CreateVolumeTakesTheChosenPoolForImageJournalAndData) {
  auto r = TopologyCreate();
  *r.mutable_accessibility_requirements()->add_preferred() = Topology({{"t/region", "east"}, {"t/zone", "1"}});
  auto p = ParseCreateVolumeRequest(r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->pool, "east-1");
  EXPECT_EQ(p->journal_pool, "east-1");
  EXPECT_EQ(p->image_options.data_pool, "east-1-ec");
  ASSERT_TRUE(p->accessible_topology);
  EXPECT_EQ(*p->accessible_topology, (TopologySegments{{"t/region", "east"}, {"t/zone", "1"}}));
  EXPECT_EQ(VolumeContextFor(*p, "img").at("pool"), "east-1");

  r.mutable_accessibility_requirements()->clear_preferred();
  *r.mutable_accessibility_requirements()->add_requisite() = Topology({{"t/region", "west"}});
  p = ParseCreateVolumeRequest(r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->pool, "west");
  EXPECT_EQ(p->image_options.data_pool, "");
}

TEST(TopologyPools, WithoutRequirementsThePoolParameterIsUsedAndNeeded) {
  auto r = TopologyCreate();
  auto p = ParseCreateVolumeRequest(r);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("parameters.pool: missing"), std::string::npos) << p.status().message();
  (*r.mutable_parameters())["pool"] = "rbd";
  p = ParseCreateVolumeRequest(r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->pool, "rbd");
  EXPECT_FALSE(p->accessible_topology);

  (*r.mutable_parameters())["topologyConstrainedPools"] = "[{}]";
  EXPECT_EQ(ParseCreateVolumeRequest(r).status().code(), Code::kInvalidArgument) << "checked even when unused";
}

TEST(TopologyPools, ARestoresChoiceWaitsForItsSnapshotsPool) {
  auto r = TopologyCreate();
  *r.mutable_accessibility_requirements()->add_preferred() = Topology({{"t/region", "west"}});
  r.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(
      "0001-0001-c-0000000000000001-b0a3c3d5-1d1a-4a9e-9a8f-2d7e0d9b7d51");
  auto p = ParseCreateVolumeRequest(r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->pool, "");
  EXPECT_FALSE(p->accessible_topology);
  EXPECT_EQ(ApplyTopologyChoice(*p, "east-1").code(), Code::kResourceExhausted);
  ASSERT_TRUE(ApplyTopologyChoice(*p, "west").ok());
  EXPECT_EQ(p->pool, "west");
  EXPECT_EQ(p->journal_pool, "west");
}

}  // namespace
}  // namespace nbdk
