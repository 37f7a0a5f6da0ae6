#include "csi/controller/volume_parameters.h"

#include <gtest/gtest.h>
#include <rbd/features.h>

#include <initializer_list>
#include <utility>

namespace nbdk {
namespace {

VolumeParameters Params(std::initializer_list<std::pair<const char*, const char*>> entries) {
  VolumeParameters out;
  for (const auto& [k, v] : entries) out[k] = v;
  return out;
}

void ExpectRefused(const Status& s, const std::string& name, const std::string& why) {
  ASSERT_FALSE(s.ok()) << name;
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << name;
  EXPECT_NE(s.message().find("parameters." + name + ": "), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(why), std::string::npos) << s.message();
}

TEST(ParameterNames, EveryHonouredOneAndTheProvisionersFamilyPass) {
  auto p = Params({{"clusterID", "c"},
                   {"pool", "rbd"},
                   {"journalPool", "j"},
                   {"radosNamespace", "ns"},
                   {"dataPool", "ec"},
                   {"imageFeatures", "layering"},
                   {"objectSize", "8388608"},
                   {"stripeUnit", "65536"},
                   {"stripeCount", "4"},
                   {"volumeNamePrefix", "k8s-"},
                   {"mounter", "rbd-nbd"},
                   {"mapOptions", "nbd:try-netlink"},
                   {"unmapOptions", "nbd:force"},
                   {"mkfsOptions", "-m0"},
                   {"nbdkeeper.io/imageName", "img"},
                   {"thickProvision", "false"},
                   {"encrypted", "True"},
                   {"encryptionType", "block"},
                   {"encryptionKMSID", "kms-1"},
                   {"tryOtherMounters", "0"},
                   {"csi.storage.k8s.io/pvc/name", "data"},
                   {"csi.storage.k8s.io/pvc/namespace", "db"},
                   {"csi.storage.k8s.io/pv/name", "pvc-1"},
                   {"csi.storage.k8s.io/fstype", "ext4"},
                   {"csi.storage.k8s.io/provisioner-secret-name", "s"},
                   {"csi.storage.k8s.io/some-future-key", "x"}});
  EXPECT_TRUE(CheckParameterNames(p).ok()) << CheckParameterNames(p).ToString();
}

TEST(ParameterNames, AnUnknownOneIsRefusedByName) {
  ExpectRefused(CheckParameterNames(Params({{"pool", "rbd"}, {"fooBar", "1"}})), "fooBar",
                "not a parameter nbdkeeper knows");
  // Case matters, as in ceph-csi: "DataPool" is not dataPool.
  ExpectRefused(CheckParameterNames(Params({{"DataPool", "ec"}})), "DataPool", "not a parameter nbdkeeper knows");
  // Only the provisioner's own prefix is passed over.
  ExpectRefused(CheckParameterNames(Params({{"csi.storage.k8s.io", "x"}})), "csi.storage.k8s.io",
                "not a parameter nbdkeeper knows");
  ExpectRefused(CheckParameterNames(Params({{"nbdkeeper.io/other", "x"}})), "nbdkeeper.io/other",
                "not a parameter nbdkeeper knows");
  // Volume context keys the Node reads are not StorageClass parameters.
  for (const char* context_only : {"imageName", "staticVolume"}) {
    ExpectRefused(CheckParameterNames(Params({{context_only, "x"}})), context_only, "not a parameter nbdkeeper knows");
  }
  // ceph-csi's QoS proposal's names, which it never read.
  ExpectRefused(CheckParameterNames(Params({{"MaxReadIOPS", "1"}})), "MaxReadIOPS", "not a parameter nbdkeeper knows");
  // Any key reaches here: one that is not short printable ASCII is quoted.
  for (const std::string& odd : {std::string("a\nb"), std::string("\x1b[2J"), std::string(5000, 'k')}) {
    Status s = CheckParameterNames(Params({{odd.c_str(), "x"}}));
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(s.message().starts_with("parameters '")) << s.message();
    EXPECT_LT(s.message().size(), 400u);
    EXPECT_EQ(s.message().find_first_of("\n\x1b"), std::string::npos) << s.message();
  }
}

TEST(ParameterNames, KnownButUnimplementedOnesAreRefusedAsNotSupported) {
  for (const char* name : {"cephLogDir", "cephLogStrategy", "snapshotNamePrefix"}) {
    ExpectRefused(CheckParameterNames(Params({{name, "x"}})), name, "not supported");
  }
  for (const char* name : {"thickProvision", "tryOtherMounters"}) {
    for (const char* yes : {"true", "True", "1", "t"}) {
      ExpectRefused(CheckParameterNames(Params({{name, yes}})), name, "not supported");
    }
    ExpectRefused(CheckParameterNames(Params({{name, "yes"}})), name, "is not a boolean");
  }
}

// As ceph-csi's ParseEncryptionOpts: encrypted by strconv.ParseBool; the
// other two read only when it is true.
TEST(Encryption, EncryptedIsAGoBooleanAndTheKmsIdDefaultsToDefault) {
  for (const char* yes : {"true", "True", "TRUE", "t", "T", "1"}) {
    auto kms = ParseEncryptionKmsId(Params({{"encrypted", yes}}), "parameters.");
    ASSERT_TRUE(kms.ok()) << yes << ": " << kms.status().ToString();
    EXPECT_EQ(*kms, std::optional<std::string>("default")) << yes;
  }
  for (const char* no : {"false", "False", "FALSE", "f", "F", "0"}) {
    // Not encrypted: encryptionType and encryptionKMSID are not read, as in
    // ceph-csi, whatever they say.
    auto kms = ParseEncryptionKmsId(Params({{"encrypted", no}, {"encryptionType", "file"}, {"encryptionKMSID", "v"}}),
                                    "parameters.");
    ASSERT_TRUE(kms.ok()) << no << ": " << kms.status().ToString();
    EXPECT_EQ(*kms, std::nullopt) << no;
  }
  auto absent = ParseEncryptionKmsId(Params({{"encryptionType", ""}, {"encryptionKMSID", "v"}}), "parameters.");
  ASSERT_TRUE(absent.ok());
  EXPECT_EQ(*absent, std::nullopt);
  EXPECT_EQ(*ParseEncryptionKmsId(Params({{"encrypted", "true"}, {"encryptionKMSID", ""}}), "parameters."),
            std::optional<std::string>("default"));
  EXPECT_EQ(
      *ParseEncryptionKmsId(Params({{"encrypted", "true"}, {"encryptionKMSID", "secrets-metadata"}}), "parameters."),
      std::optional<std::string>("secrets-metadata"));
  EXPECT_EQ(*ParseEncryptionKmsId(Params({{"encrypted", "1"}, {"encryptionType", "block"}}), "parameters."),
            std::optional<std::string>("default"));
}

TEST(Encryption, RefusalsNameTheField) {
  const std::pair<VolumeParameters, std::pair<const char*, const char*>> cases[] = {
      {Params({{"encrypted", "yes"}}), {"encrypted", "'yes' is not a boolean"}},
      {Params({{"encrypted", ""}}), {"encrypted", "is not a boolean"}},
      {Params({{"encrypted", " true"}}), {"encrypted", "is not a boolean"}},
      // Present but empty is ceph-csi's EncryptionTypeInvalid.
      {Params({{"encrypted", "true"}, {"encryptionType", ""}}), {"encryptionType", "empty"}},
      {Params({{"encrypted", "true"}, {"encryptionType", "file"}}), {"encryptionType", "fscrypt not supported"}},
      {Params({{"encrypted", "true"}, {"encryptionType", "BLOCK"}}), {"encryptionType", "neither block nor file"}},
      {Params({{"encrypted", "true"}, {"encryptionType", "luks"}}), {"encryptionType", "'luks'"}},
  };
  for (const auto& [params, expected] : cases) {
    ExpectRefused(ParseEncryptionKmsId(params, "parameters.").status(), expected.first, expected.second);
  }
}

TEST(ImageLayout, DefaultsAreLibrbdsAndFeaturesCephCsis) {
  auto layout = ParseImageLayout(Params({}));
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(*layout, ImageCreateOptions{.features = *ParseImageFeatures(kDefaultImageFeatures)});
}

TEST(ImageLayout, EveryOptionIsRead) {
  auto layout = ParseImageLayout(Params({{"imageFeatures", "layering"},
                                         {"dataPool", "ec-data"},
                                         {"objectSize", "8388608"},
                                         {"stripeUnit", "65536"},
                                         {"stripeCount", "16"}}));
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(*layout, (ImageCreateOptions{.features = RBD_FEATURE_LAYERING,
                                         .data_pool = "ec-data",
                                         .object_size = 8 << 20,
                                         .stripe_unit = 64 << 10,
                                         .stripe_count = 16}));
  // The stripe unit may be the whole object (librbd's default layout).
  EXPECT_TRUE(ParseImageLayout(Params({{"stripeUnit", "4194304"}, {"stripeCount", "1"}})).ok());
  EXPECT_TRUE(ParseImageLayout(Params({{"objectSize", "4096"}, {"stripeUnit", "4096"}, {"stripeCount", "1"}})).ok());
  EXPECT_TRUE(ParseImageLayout(Params({{"objectSize", "33554432"}})).ok());
}

TEST(ImageLayout, ValuesLibrbdWouldRefuseAreRefusedByName) {
  const std::pair<VolumeParameters, const char*> cases[] = {
      {Params({{"dataPool", ""}}), "dataPool"},
      {Params({{"dataPool", "ec/data"}}), "dataPool"},
      {Params({{"dataPool", "-ec"}}), "dataPool"},
      {Params({{"objectSize", "3000000"}}), "objectSize"},   // not a power of two
      {Params({{"objectSize", "2048"}}), "objectSize"},      // below librbd's order 12
      {Params({{"objectSize", "67108864"}}), "objectSize"},  // above its order 25
      {Params({{"objectSize", "0"}}), "objectSize"},
      {Params({{"objectSize", "4M"}}), "objectSize"},  // bytes, in decimal
      {Params({{"objectSize", "-4096"}}), "objectSize"},
      {Params({{"objectSize", "+4096"}}), "objectSize"},
      {Params({{"objectSize", ""}}), "objectSize"},
      {Params({{"objectSize", "99999999999999999999999"}}), "objectSize"},
      {Params({{"stripeUnit", "65536"}}), "stripeCount"},  // one without the other
      {Params({{"stripeCount", "2"}}), "stripeUnit"},
      {Params({{"stripeUnit", "65537"}, {"stripeCount", "2"}}), "stripeUnit"},
      {Params({{"stripeUnit", "1024"}, {"stripeCount", "2"}}), "stripeUnit"},
      {Params({{"stripeUnit", "8388608"}, {"stripeCount", "2"}}), "stripeUnit"},  // above the default object
      {Params({{"objectSize", "65536"}, {"stripeUnit", "131072"}, {"stripeCount", "2"}}), "stripeUnit"},
      {Params({{"stripeUnit", "65536"}, {"stripeCount", "0"}}), "stripeCount"},
      {Params({{"stripeUnit", "65536"}, {"stripeCount", "two"}}), "stripeCount"},
      {Params({{"imageFeatures", "layering,fast-diff"}}), "imageFeatures"},
      {Params({{"imageFeatures", ""}}), "imageFeatures"},                   // ceph-csi refuses it too
      {Params({{"imageFeatures", "layering,striping"}}), "imageFeatures"},  // librbd's, not ceph-csi's
  };
  for (const auto& [params, name] : cases) {
    auto layout = ParseImageLayout(params);
    ASSERT_FALSE(layout.ok()) << name;
    EXPECT_EQ(layout.status().code(), Code::kInvalidArgument);
    EXPECT_NE(layout.status().message().find(std::string("parameters.") + name), std::string::npos)
        << layout.status().message();
  }
}

TEST(VolumeMetadata, ThePvcAndPvNamesUnderCephCsisKeys) {
  auto metadata = VolumeMetadataOf(Params({{"csi.storage.k8s.io/pvc/name", "data"},
                                           {"csi.storage.k8s.io/pvc/namespace", "db"},
                                           {"csi.storage.k8s.io/pv/name", "pvc-1b7e"},
                                           {"csi.storage.k8s.io/fstype", "ext4"},
                                           {"pool", "rbd"}}));
  EXPECT_EQ(metadata, (std::map<std::string, std::string>{{"csi.storage.k8s.io/pvc/name", "data"},
                                                          {"csi.storage.k8s.io/pvc/namespace", "db"},
                                                          {"csi.storage.k8s.io/pv/name", "pvc-1b7e"}}));
  EXPECT_TRUE(VolumeMetadataOf(Params({{"pool", "rbd"}})).empty());
}

}  // namespace
}  // namespace nbdk
