// Topology input (csi/topology.h, csi/controller/topology_pools.h): the
// bytes as a StorageClass's topologyConstrainedPools and as a node's label
// file. A parsed pool's names pass the Ceph name rule and a chosen pool is
// one of them; a node's CRUSH location always makes rbd-nbd options that
// the supervisor's allow-list takes; every error keeps to the error rule.
#include <algorithm>

#include "ceph/image_spec.h"
#include "csi/controller/topology_pools.h"
#include "csi/topology.h"
#include "supervisor/rbd_nbd_options.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = nbdk::fuzz::Text(data, size);
  auto pools = nbdk::ParseTopologyConstrainedPools(text);
  NBDK_FUZZ_CHECK(nbdk::fuzz::WithinErrorRule(pools.status()));
  if (pools.ok()) {
    csi::v1::TopologyRequirement want;
    for (const nbdk::TopologyConstrainedPool& p : *pools) {
      NBDK_FUZZ_CHECK(nbdk::CheckCephName("pool", p.pool, true).ok());
      NBDK_FUZZ_CHECK(nbdk::CheckCephName("dataPool", p.data_pool, false).ok());
      auto* topology = want.add_preferred()->mutable_segments();
      for (const auto& [label, value] : p.segments) (*topology)["topology.x/" + label] = value;
    }
    auto choice = nbdk::ChooseTopologyPool(*pools, want);
    NBDK_FUZZ_CHECK(nbdk::fuzz::WithinErrorRule(choice.status()));
    if (choice.ok()) {
      NBDK_FUZZ_CHECK(std::any_of(pools->begin(), pools->end(), [&](const auto& p) { return p.pool == choice->pool; }));
    }
  }
  auto labels = nbdk::ParseNodeLabels(text, "labels");
  NBDK_FUZZ_CHECK(nbdk::fuzz::WithinErrorRule(labels.status()));
  if (labels.ok()) {
    std::vector<std::string> keys;
    for (const auto& [key, value] : *labels) {
      NBDK_FUZZ_CHECK(nbdk::CheckLabelKey(key, "key").ok());
      keys.push_back(key);
    }
    auto options = nbdk::ReadAffinityMapOptions(nbdk::CrushLocation(keys, *labels));
    NBDK_FUZZ_CHECK(nbdk::ValidateRbdNbdOptions(options).ok());
    auto topology = nbdk::NodeTopology(keys, *labels, "rbd.nbdkeeper.io");
    NBDK_FUZZ_CHECK(topology.ok() && topology->size() <= labels->size());
  }
  return 0;
}
