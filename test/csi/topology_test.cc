// A node's labels, topology segments and CRUSH location, by ceph-csi's rules
// (internal/util/topology.go, crushlocation.go, read_affinity.go).
#include "csi/topology.h"

#include <gtest/gtest.h>

#include "supervisor/rbd_nbd_options.h"

namespace nbdk {
namespace {

using Strings = std::vector<std::string>;

TEST(NodeLabels, FlagAndFileFormsAreOneRule) {
  auto flag = ParseNodeLabels(" topology.kubernetes.io/zone=z1, kubernetes.io/hostname=node-1.example.com ,", "f");
  ASSERT_TRUE(flag.ok()) << flag.status().ToString();
  EXPECT_EQ(*flag,
            (NodeLabels{{"kubernetes.io/hostname", "node-1.example.com"}, {"topology.kubernetes.io/zone", "z1"}}));
  auto file = ParseNodeLabels("# placed by the rack survey\nrack=r7\n\n  row=a,empty=\n", "f");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(*file, (NodeLabels{{"empty", ""}, {"rack", "r7"}, {"row", "a"}}));
}

TEST(NodeLabels, RefusalsNameWhatIsWrong) {
  const std::pair<const char*, const char*> cases[] = {
      {"zone", "'zone' is not key=value"},        {"Zone.Example.com/zone=a", "is not a label key"},
      {"example.com/=a", "is not a label key"},   {"-zone=a", "is not a label key"},
      {"zone=-a", "is not a label value"},        {"zone=a b", "is not a label value"},
      {"zone=a,zone=b", "'zone' is given twice"},
  };
  for (const auto& [text, error] : cases) {
    auto labels = ParseNodeLabels(text, "--node-labels");
    ASSERT_FALSE(labels.ok()) << text;
    EXPECT_EQ(labels.status().code(), Code::kInvalidArgument);
    EXPECT_NE(labels.status().message().find(error), std::string::npos) << labels.status().message();
    EXPECT_NE(labels.status().message().find("--node-labels"), std::string::npos);
  }
  EXPECT_EQ(ParseNodeLabels(std::string(64, 'a') + "=x", "f").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ParseLabelKeys("zone,zone", "k").status().code(), Code::kInvalidArgument);
}

TEST(NodeTopology, EachDomainLabelIsASegmentOfTheDriver) {
  NodeLabels labels = {{"topology.kubernetes.io/region", "east"}, {"topology.kubernetes.io/zone", "1"}, {"x", "y"}};
  auto segments =
      NodeTopology({"topology.kubernetes.io/region", "topology.kubernetes.io/zone"}, labels, "rbd.nbdkeeper.io");
  ASSERT_TRUE(segments.ok()) << segments.status().ToString();
  EXPECT_EQ(*segments,
            (TopologySegments{{"topology.rbd.nbdkeeper.io/region", "east"}, {"topology.rbd.nbdkeeper.io/zone", "1"}}));
  EXPECT_TRUE(NodeTopology({}, labels, "d")->empty());
  auto missing = NodeTopology({"topology.kubernetes.io/zone", "rack", "row"}, labels, "d");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no label rack, row"), std::string::npos) << missing.status().message();
}

TEST(CrushLocation, LabelsBecomeCrushTypesAndNamesAsCephCsiMakesThem) {
  NodeLabels labels = {
      {"kubernetes.io/hostname", "node-1.example.com"}, {"topology.kubernetes.io/zone", "z1"}, {"rack", ""}};
  auto location = CrushLocation({"kubernetes.io/hostname", "topology.kubernetes.io/zone", "rack", "absent"}, labels);
  EXPECT_EQ(location, (std::map<std::string, std::string>{{"host", "node-1-example-com"}, {"zone", "z1"}}));
  EXPECT_EQ(ReadAffinityMapOptions(location),
            (Strings{"--rbd_read_from_replica_policy=localize", "--crush_location=host=node-1-example-com;zone=z1"}));
  EXPECT_TRUE(ReadAffinityMapOptions({}).empty());
  // What the node makes, the supervisor's allow-list takes (it re-checks
  // journaled options before every attach).
  EXPECT_TRUE(ValidateRbdNbdOptions(ReadAffinityMapOptions(location)).ok());
}

TEST(CrushLocation, TheVolumesOwnMapOptionsWin) {
  const Strings affinity = {"--rbd_read_from_replica_policy=localize", "--crush_location=host=a"};
  EXPECT_EQ(WithReadAffinity({"--try-netlink"}, affinity),
            (Strings{"--try-netlink", "--rbd_read_from_replica_policy=localize", "--crush_location=host=a"}));
  EXPECT_EQ(WithReadAffinity({"--rbd_read_from_replica_policy=balance"}, affinity),
            (Strings{"--rbd_read_from_replica_policy=balance"}));
  EXPECT_EQ(WithReadAffinity({"--crush_location=host=b"}, affinity), (Strings{"--crush_location=host=b"}));
  EXPECT_EQ(WithReadAffinity({}, {}), Strings{});
}

}  // namespace
}  // namespace nbdk
