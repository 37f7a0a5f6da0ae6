// PlanLuksOpening: what an encrypted stage does with what the image says
// and what blkid finds, for every pair. Nothing is ever formatted but a
// blank device of an image still encryptionPrepared.
#include "csi/node/luks_stage.h"

#include <gtest/gtest.h>

namespace nbdk {
namespace {

constexpr char kId[] = "0001-0004-test-0000000000000002-6b1f0c8e-3a0b-4c55-9d2d-0b1f8a3e5c11";

const DeviceSignature kBlank{};
const DeviceSignature kLuks{"crypto_LUKS", ""};
const DeviceSignature kExt4{"ext4", ""};
const DeviceSignature kGpt{"", "gpt"};

void ExpectRefused(const Result<LuksOpening>& plan, std::string_view mentions) {
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), Code::kFailedPrecondition) << plan.status().ToString();
  EXPECT_NE(plan.status().message().find(mentions), std::string::npos) << plan.status().message();
  EXPECT_NE(plan.status().message().find(kId), std::string::npos) << plan.status().message();
}

TEST(PlanLuksOpeningTest, APreparedBlankDeviceIsFormattedOnlyWhenWritable) {
  EXPECT_EQ(*PlanLuksOpening(kId, "encryptionPrepared", kBlank, false), LuksOpening::kFormatThenOpen);
  ExpectRefused(PlanLuksOpening(kId, "encryptionPrepared", kBlank, true), "staged read-only");
}

TEST(PlanLuksOpeningTest, AHeaderOpensAndAPreparedOneIsMarkedFirst) {
  EXPECT_EQ(*PlanLuksOpening(kId, "encrypted", kLuks, false), LuksOpening::kOpen);
  EXPECT_EQ(*PlanLuksOpening(kId, "encrypted", kLuks, true), LuksOpening::kOpen);
  EXPECT_EQ(*PlanLuksOpening(kId, "encryptionPrepared", kLuks, false), LuksOpening::kMarkThenOpen);
}

TEST(PlanLuksOpeningTest, AnEncryptedImageWhoseHeaderIsGoneIsNeverFormattedAgain) {
  ExpectRefused(PlanLuksOpening(kId, "encrypted", kBlank, false), "no LUKS header");
}

TEST(PlanLuksOpeningTest, OtherDataIsNeverOverwritten) {
  for (const auto& state : {"encrypted", "encryptionPrepared"}) {
    ExpectRefused(PlanLuksOpening(kId, state, kExt4, false), "holds a ext4 signature");
    ExpectRefused(PlanLuksOpening(kId, state, kGpt, false), "gpt");
  }
}

TEST(PlanLuksOpeningTest, AnImageWithoutAKnownStateIsRefused) {
  ExpectRefused(PlanLuksOpening(kId, std::nullopt, kBlank, false), "not created encrypted");
  ExpectRefused(PlanLuksOpening(kId, "encryptionprepared", kBlank, false), "neither");
  ExpectRefused(PlanLuksOpening(kId, "", kLuks, false), "neither");
}

}  // namespace
}  // namespace nbdk
