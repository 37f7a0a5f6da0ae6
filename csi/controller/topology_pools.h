// A StorageClass's topologyConstrainedPools, as ceph-csi reads it
// (internal/util/topology.go): which pool a volume lands in for the
// topology a CreateVolume asks for. The node's side is csi/topology.h.
// Pure.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "csi/proto/csi.pb.h"
#include "csi/topology.h"

namespace nbdk {

// One entry of a StorageClass's topologyConstrainedPools.
struct TopologyConstrainedPool {
  std::string pool;                                           // poolName
  std::string data_pool;                                      // dataPool; "" is none
  std::vector<std::pair<std::string, std::string>> segments;  // domainSegments: domainLabel, value
};

// The parameter's JSON: an array of {"poolName", "dataPool", "domainSegments":
// [{"domainLabel", "value"}]}, keys matched as Go's decoder does (exactly,
// else ignoring case). InvalidArgument naming the entry and key: invalid
// JSON, a missing or bad poolName (ceph/image_spec.h's name rule), a bad
// dataPool, a segment without both strings, and any key not listed here.
Result<std::vector<TopologyConstrainedPool>> ParseTopologyConstrainedPools(std::string_view json);

// The pool a volume lands in and the topology it is accessible from.
struct TopologyChoice {
  std::string pool;
  std::string data_pool;
  TopologySegments segments;  // the requested topology that matched, as given
};

// ceph-csi's FindPoolAndTopology: the first preferred topology, then the
// first requisite one, that some pool's segments all match (a request key
// counts by its name after the first '/'); of those pools the first listed.
// `only_pool` non-empty (a restore: the snapshot's pool) leaves every other
// pool out. ResourceExhausted naming the pools when none matches.
Result<TopologyChoice> ChooseTopologyPool(const std::vector<TopologyConstrainedPool>& pools,
                                          const csi::v1::TopologyRequirement& requirement,
                                          std::string_view only_pool = "");

}  // namespace nbdk
