#include "csi/controller/volume_qos.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>

namespace nbdk {
namespace {

using Metadata = std::map<std::string, std::string>;
constexpr int64_t kGiB = int64_t{1} << 30;

VolumeParameters Params(std::initializer_list<std::pair<const char*, const char*>> entries) {
  VolumeParameters out;
  for (const auto& [k, v] : entries) out[k] = v;
  return out;
}

TEST(VolumeQos, NoBaseNoLimits) {
  EXPECT_TRUE(QosImageMetadata(Params({{"pool", "rbd"}}), kGiB).empty());
  // An empty value is absent, as ceph-csi reads them.
  EXPECT_TRUE(QosImageMetadata(Params({{"baseIops", ""}}), kGiB).empty());
  EXPECT_TRUE(CheckQosParameters(Params({{"baseIops", ""}, {"maxIops", ""}})).ok());
}

// A base alone is the limit, whatever the size, and is saved under
// ceph-csi's name; the conf_ key is what `rbd config image list` shows.
TEST(VolumeQos, ABaseIsTheLimit) {
  auto p = Params({{"baseReadIops", "2000"}, {"baseWriteBps", "10485760"}});
  ASSERT_TRUE(CheckQosParameters(p).ok());
  EXPECT_EQ(QosImageMetadata(p, 100 * kGiB), (Metadata{{"conf_rbd_qos_read_iops_limit", "2000"},
                                                       {"rbd_base_qos_read_iops_limit", "2000"},
                                                       {"conf_rbd_qos_write_bps_limit", "10485760"},
                                                       {"rbd_base_qos_write_bps_limit", "10485760"}}));
}

// ceph-csi's calcQosBasedOnCapacity: base + whole GiB above
// baseVolSizeBytes * rate, at most the maximum.
TEST(VolumeQos, CapacityBasedLimitsGrowWithTheSizeUpToTheMaximum) {
  auto p =
      Params({{"baseIops", "1000"}, {"iopsPerGiB", "100"}, {"maxIops", "3000"}, {"baseVolSizeBytes", "10737418240"}});
  ASSERT_TRUE(CheckQosParameters(p).ok());
  auto at = [&](int64_t bytes) { return QosImageMetadata(p, bytes).at("conf_rbd_qos_iops_limit"); };
  EXPECT_EQ(at(5 * kGiB), "1000");              // below the base size
  EXPECT_EQ(at(10 * kGiB), "1000");             // at it
  EXPECT_EQ(at(15 * kGiB + kGiB / 2), "1500");  // 5 whole GiB above
  EXPECT_EQ(at(30 * kGiB), "3000");             // 20 above: 3000, the maximum
  EXPECT_EQ(at(100 * kGiB), "3000");            // capped
  EXPECT_EQ(QosImageMetadata(p, kGiB), (Metadata{{"conf_rbd_qos_iops_limit", "1000"},
                                                 {"rbd_base_qos_iops_limit", "1000"},
                                                 {"rbd_iops_per_gib_limit", "100"},
                                                 {"rbd_max_qos_iops_limit", "3000"},
                                                 {"rbd_base_qos_vol_size", "10737418240"}}));
  // Without baseVolSizeBytes the rate does nothing, as in ceph-csi.
  EXPECT_EQ(QosImageMetadata(Params({{"baseBps", "5"}, {"bpsPerGiB", "7"}}), 100 * kGiB).at("conf_rbd_qos_bps_limit"),
            "5");
  // A huge rate saturates instead of wrapping.
  auto huge = Params({{"baseBps", "1"}, {"bpsPerGiB", "9223372036854775807"}, {"baseVolSizeBytes", "0"}});
  ASSERT_TRUE(CheckQosParameters(huge).ok());
  EXPECT_EQ(QosImageMetadata(huge, 8 * kGiB).at("conf_rbd_qos_bps_limit"), "9223372036854775807");
}

TEST(VolumeQos, ValuesAreNonNegativeIntegersAndRatesNeedTheirBase) {
  for (const char* bad : {"-1", "1.5", "10k", " 10", "0x10", "9223372036854775808", "99999999999999999999"}) {
    Status s = CheckQosParameters(Params({{"baseIops", bad}}));
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.code(), Code::kInvalidArgument);
    EXPECT_TRUE(s.message().starts_with("parameters.baseIops: ")) << s.message();
  }
  Status s = CheckQosParameters(Params({{"baseVolSizeBytes", "ten"}}));
  EXPECT_TRUE(s.message().starts_with("parameters.baseVolSizeBytes: ")) << s.message();
  for (const char* orphan : {"maxWriteIops", "readBpsPerGiB"}) {
    Status s = CheckQosParameters(Params({{orphan, "10"}}));
    ASSERT_FALSE(s.ok()) << orphan;
    EXPECT_NE(s.message().find(std::string("parameters.") + orphan + ": needs base"), std::string::npos) << s.message();
  }
  EXPECT_TRUE(CheckQosParameters(Params({{"baseIops", "0"}})).ok());
}

// What CreateVolume saved is what a grown volume's limits are computed
// from: each saved key maps back to the parameter it came from.
TEST(VolumeQos, SavedKeysReadBackAsTheParameters) {
  auto p = Params({{"baseWriteIops", "100"},
                   {"writeIopsPerGiB", "10"},
                   {"maxWriteIops", "500"},
                   {"baseVolSizeBytes", "1073741824"}});
  VolumeParameters back;
  const auto saved = SavedQosParameters();
  for (const auto& [key, value] : QosImageMetadata(p, kGiB)) {
    if (key.starts_with("conf_")) continue;
    ASSERT_TRUE(saved.contains(key)) << key;
    back[saved.at(key)] = value;
  }
  EXPECT_EQ(QosImageMetadata(back, 11 * kGiB), QosImageMetadata(p, 11 * kGiB));
  EXPECT_EQ(QosImageMetadata(back, 11 * kGiB).at("conf_rbd_qos_write_iops_limit"), "200");
}

}  // namespace
}  // namespace nbdk
