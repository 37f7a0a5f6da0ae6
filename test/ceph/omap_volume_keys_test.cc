// ceph-csi's omap journal names and values (ceph/omap_volume_keys.h).
#include "ceph/omap_volume_keys.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace nbdk {
namespace {

constexpr char kUuid1[] = "11111111-1111-4111-8111-111111111111";

TEST(OmapVolumeKeys, NamesAreCephCsis) {
  EXPECT_EQ(DirectoryObject("default"), "csi.volumes.default");
  EXPECT_EQ(DirectoryKey("pvc-1"), "csi.volume.pvc-1");
  EXPECT_EQ(VolumeObject(kUuid1), std::string("csi.volume.") + kUuid1);
  EXPECT_EQ(DefaultImageName(kUuid1), std::string("csi-vol-") + kUuid1);
}

TEST(OmapVolumeKeys, PoolIdHexRoundTrips) {
  EXPECT_EQ(PoolIdHex(10), "000000000000000a");
  EXPECT_EQ(PoolIdHex(-1), "ffffffffffffffff");
  EXPECT_EQ(*ParsePoolIdHex("000000000000000A"), 10);
  EXPECT_EQ(*ParsePoolIdHex("ffffffffffffffff"), -1);
  EXPECT_FALSE(ParsePoolIdHex("0a").ok());
  EXPECT_FALSE(ParsePoolIdHex("000000000000000g").ok());
}

TEST(OmapVolumeKeys, DirectoryValueForms) {
  EXPECT_EQ(*ParseDirectoryValue(kUuid1), (DirectoryValue{std::nullopt, kUuid1}));
  std::string other = std::string("0000000000000003/") + kUuid1;
  EXPECT_EQ(*ParseDirectoryValue(other), (DirectoryValue{3, kUuid1}));
  EXPECT_EQ(FormatDirectoryValue({3, kUuid1}), other);
  EXPECT_EQ(FormatDirectoryValue({std::nullopt, kUuid1}), kUuid1);
  for (const char* bad : {"", "not-a-uuid", "03/11111111-1111-4111-8111-111111111111",
                          "11111111-1111-4111-8111-11111111111", "11111111_1111-4111-8111-111111111111"}) {
    auto v = ParseDirectoryValue(bad);
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_EQ(v.status().code(), Code::kCorruption);
  }
}

TEST(OmapVolumeKeys, TheResolverReadsWhatTheJournalWrites) {
  // csi/node/image_resolver.cc reads csi.volume.<uuid> -> csi.imagename.
  EXPECT_EQ(JournalObject(kVolumeJournalNames, kUuid1), VolumeObject(kUuid1));
  EXPECT_STREQ(kImageNameKey, "csi.imagename");
  EXPECT_EQ(DefaultImageName(kVolumeJournalNames, kUuid1), DefaultImageName(kUuid1));
}

}  // namespace
}  // namespace nbdk
