// A node's place as ceph-csi has it: its labels, its topology segments
// (NodeGetInfo) and its CRUSH location (where its reads should go). The
// Controller's side, a StorageClass's topologyConstrainedPools, is
// csi/controller/topology_pools.h. Pure.
//
// A node's labels come from its own configuration (--node-labels,
// --node-labels-file), not from the Kubernetes API: the node plugin has no
// API token, Nomad and bare metal have no Node object, and labels that
// place a node change as rarely as its configuration does. Each rule below
// is ceph-csi's (internal/util/topology.go, crushlocation.go), so a volume
// lands and reads where it would under ceph-csi.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace nbdk {

using NodeLabels = std::map<std::string, std::string>;
using TopologySegments = std::map<std::string, std::string>;

// "zone=a,kubernetes.io/hostname=n1" or a file of such pairs, one or more a
// line; '#' starts a comment line; blanks around pairs are dropped. Keys
// and values follow Kubernetes' label syntax (an optional DNS-subdomain
// prefix and '/', a name of 1-63 [A-Za-z0-9._-] beginning and ending
// alphanumeric; a value empty or such a name). InvalidArgument naming
// `what` and the pair: a pair without '=', a bad key or value, a key twice.
Result<NodeLabels> ParseNodeLabels(std::string_view text, std::string_view what);

// What a label or segment key names, the part after its first '/'
// ("topology.kubernetes.io/zone" -> "zone"): ceph-csi's segment and CRUSH
// type, and the name a StorageClass's domainLabel matches.
std::string_view LabelName(std::string_view key);

// A label key by the rule above; InvalidArgument naming `what` otherwise.
Status CheckLabelKey(std::string_view key, std::string_view what);

// A comma list of label keys (--domain-labels, --crush-location-labels):
// each by the key rule above, none twice. InvalidArgument naming `what`.
Result<std::vector<std::string>> ParseLabelKeys(std::string_view csv, std::string_view what);

// The node's segments: "topology.<driver>/<name>" -> value for each domain
// label, <name> being the label key after its first '/'. InvalidArgument
// naming every domain label the node lacks (ceph-csi refuses to start).
Result<TopologySegments> NodeTopology(const std::vector<std::string>& domain_labels, const NodeLabels& labels,
                                      std::string_view driver_name);

// The node's CRUSH location: for each of `crush_labels` the node has with a
// non-empty value, <name after the key's first '/'> -> the value with '.'
// as '-' ("hostname" is CRUSH's "host"). Labels the node lacks are left out.
std::map<std::string, std::string> CrushLocation(const std::vector<std::string>& crush_labels,
                                                 const NodeLabels& labels);

// The rbd-nbd options that make librbd read from the replica nearest to
// `location`: {"--rbd_read_from_replica_policy=localize",
// "--crush_location=host=n1;zone=a"}; none for an empty location. (ceph-csi
// passes read affinity to krbd only; rbd-nbd takes librbd's settings.)
std::vector<std::string> ReadAffinityMapOptions(const std::map<std::string, std::string>& location);

// A volume's rbd-nbd options with the node's read affinity after them,
// unless the volume's own (its StorageClass's mapOptions) already say how
// it reads or where it is: those win.
std::vector<std::string> WithReadAffinity(std::vector<std::string> options,
                                          const std::vector<std::string>& read_affinity);

}  // namespace nbdk
