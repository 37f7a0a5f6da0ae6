#include "journal/volume_id.h"

#include <gtest/gtest.h>

#include <vector>

namespace nbdk {
namespace {

constexpr char kUuid[] = "b0a3c3d5-1d1a-4a9e-9a8f-2d7e0d9b7d51";

// A well-formed ID whose cluster ID contains '-'.
std::string Valid() { return std::string("0001-0009-rook-ceph-0000000000000002-") + kUuid; }

void ExpectInvalid(std::string_view id, std::string_view mentions) {
  auto r = DecodeVolumeId(id);
  ASSERT_FALSE(r.ok()) << id;
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << id;
  EXPECT_TRUE(r.status().message().starts_with("volume_id: ")) << r.status().message();
  EXPECT_NE(r.status().message().find(mentions), std::string::npos)
      << "'" << r.status().message() << "' should mention '" << mentions << "'";
}

TEST(VolumeIdTest, DecodesClusterIdContainingDashes) {
  auto r = DecodeVolumeId(Valid());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->encoding_version, 1);
  EXPECT_EQ(r->cluster_id, "rook-ceph");
  EXPECT_EQ(r->pool_id, 2);
  EXPECT_EQ(r->object_uuid, kUuid);
}

TEST(VolumeIdTest, DecodesUuidClusterIdAndLargePoolId) {
  // ceph-csi's usual shape: the cluster ID is the Ceph fsid (36 chars).
  std::string id = std::string("0001-0024-") + kUuid + "-00000000000001ab-" + kUuid;
  auto r = DecodeVolumeId(id);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->cluster_id, kUuid);
  EXPECT_EQ(r->pool_id, 0x1ab);
}

TEST(VolumeIdTest, AcceptsUppercaseHexLikeCephCsi) {
  auto r = DecodeVolumeId(std::string("0001-0009-rook-ceph-00000000000000AB-") + kUuid);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->pool_id, 0xab);
}

TEST(VolumeIdTest, RoundTrips) {
  for (const std::string& cluster : std::vector<std::string>{"c", "rook-ceph", "a-b-c-d-e", std::string(64, 'x')}) {
    VolumeId id{1, cluster, 0x7fffffffffffffffLL, kUuid};
    std::string encoded = EncodeVolumeId(id);
    EXPECT_EQ(encoded.size(), kVolumeIdFixedLength + cluster.size());
    auto decoded = DecodeVolumeId(encoded);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(*decoded, id);
    EXPECT_EQ(EncodeVolumeId(*decoded), encoded);
  }
  EXPECT_EQ(EncodeVolumeId(*DecodeVolumeId(Valid())), Valid());
}

TEST(VolumeIdTest, EncodesExactly) {
  VolumeId id{1, "rook-ceph", 2, kUuid};
  EXPECT_EQ(EncodeVolumeId(id), Valid());
}

TEST(VolumeIdTest, MaximumLengthIsAccepted) {
  std::string id = "0001-0040-" + std::string(64, 'c') + "-0000000000000001-" + kUuid;
  ASSERT_EQ(id.size(), 128u);
  EXPECT_TRUE(DecodeVolumeId(id).ok());
}

TEST(VolumeIdTest, RejectsShortAndLong) {
  ExpectInvalid("", "shorter than the 64");
  ExpectInvalid(Valid().substr(0, 63), "shorter than the 64");
  ExpectInvalid("0001-0041-" + std::string(65, 'c') + "-0000000000000001-" + kUuid, "longer than the CSI limit");
}

TEST(VolumeIdTest, RejectsBadHexInEachField) {
  std::string v = Valid();
  ExpectInvalid("zz01" + v.substr(4), "encoding version field 'zz01' is not hex");
  ExpectInvalid("0001-00g9" + v.substr(9), "cluster ID length field '00g9' is not hex");
  std::string pool = v;
  pool[25] = 'x';  // inside the pool ID
  ExpectInvalid(pool, "pool ID field '00000x0000000002' is not hex");
}

TEST(VolumeIdTest, RejectsOtherEncodingVersions) {
  ExpectInvalid("0002" + Valid().substr(4), "encoding version 0002 is not supported");
}

TEST(VolumeIdTest, RejectsLengthFieldLargerThanTheRest) {
  ExpectInvalid("0001-00ff" + Valid().substr(9), "cluster ID length field '00ff' (255) is larger than the rest");
}

TEST(VolumeIdTest, RejectsLengthFieldThatMissesTheClusterId) {
  // "rook-cep", then 'h' where the separator should be.
  ExpectInvalid("0001-0008" + Valid().substr(9), "expected '-' after the cluster ID at offset 18, found 'h'");
  // "rook-ceph-", then the pool ID's first digit.
  ExpectInvalid("0001-000a" + Valid().substr(9), "expected '-' after the cluster ID at offset 20, found '0'");
}

TEST(VolumeIdTest, RejectsEmptyClusterId) {
  ExpectInvalid(std::string("0001-0000--0000000000000002-") + kUuid, "the cluster ID is empty");
}

TEST(VolumeIdTest, RejectsMissingSeparators) {
  std::string v = Valid();
  std::string a = v;
  a[4] = '_';
  ExpectInvalid(a, "after the encoding version");
  std::string b = v;
  b[9] = '_';
  ExpectInvalid(b, "after the cluster ID length");
  std::string c = v;
  c[36] = '_';  // between the pool ID and the UUID
  ExpectInvalid(c, "after the pool ID");
}

TEST(VolumeIdTest, RejectsWrongUuidLengthAndTrailingJunk) {
  ExpectInvalid(Valid() + "x", "object UUID has 37 characters");
  ExpectInvalid(Valid().substr(0, Valid().size() - 1), "object UUID has 35 characters");
  ExpectInvalid("0001-0009-rook-ceph-0000000000000002-" + std::string(kUuid) + "-0000", "object UUID has 41");
}

TEST(VolumeIdTest, RejectsNonCanonicalUuid) {
  std::string v = Valid();
  v[v.size() - 1] = 'g';
  ExpectInvalid(v, "is not 8-4-4-4-12 hex digits");
  std::string dashes = std::string("0001-0009-rook-ceph-0000000000000002-") + "b0a3c3d51-d1a-4a9e-9a8f-2d7e0d9b7d51";
  ExpectInvalid(dashes, "is not 8-4-4-4-12");
}

TEST(VolumeIdTest, ShowsUnprintableBytesSafely) {
  std::string v =
      "\x01\x02"
      "01" +
      Valid().substr(4);
  auto r = DecodeVolumeId(v);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'\\x01\\x0201'"), std::string::npos) << r.status().message();
  EXPECT_EQ(ValidateVolumeId("a\n\x1b[2J").message(), "volume_id 'a\\n\\x1b[2J': only [A-Za-z0-9._-] allowed");
}

TEST(VolumeIdRuleTest, NamesWhyAnIdIsRefused) {
  EXPECT_EQ(ValidateVolumeId("").message(), "volume_id: missing");
  EXPECT_EQ(ValidateVolumeId(std::string(129, 'a')).message(), "volume_id: 129 bytes, longer than 128");
  EXPECT_EQ(ValidateVolumeId(".hidden").message(), "volume_id '.hidden': starts with '.'");
  EXPECT_EQ(ValidateVolumeId("-o").message(), "volume_id '-o': starts with '-'");
  EXPECT_EQ(ValidateVolumeId("a/b").message(), "volume_id 'a/b': only [A-Za-z0-9._-] allowed");
  EXPECT_EQ(ValidateVolumeId("a b").code(), Code::kInvalidArgument);
}

TEST(VolumeIdRuleTest, AcceptsCephCsiAndStaticIds) {
  EXPECT_TRUE(ValidateVolumeId(Valid()).ok());
  EXPECT_TRUE(ValidateVolumeId(std::string("0001-0024-") + kUuid + "-00000000000001ab-" + kUuid).ok());
  EXPECT_TRUE(ValidateVolumeId("0001-0009-rook-ceph-0000000000000001-abc_d.e").ok());
  EXPECT_TRUE(ValidateVolumeId("my-image").ok());
  EXPECT_TRUE(ValidateVolumeId(std::string(128, 'a')).ok());
}

}  // namespace
}  // namespace nbdk
