#include "csi/controller/controller_request.h"

#include <gtest/gtest.h>
#include <rbd/features.h>

#include <functional>

namespace nbdk {
namespace {

using Mode = csi::v1::VolumeCapability::AccessMode;

constexpr char kVolumeId[] = "0001-0009-rook-ceph-0000000000000002-b0a3c3d5-1d1a-4a9e-9a8f-2d7e0d9b7d51";
constexpr char kKey[] = "AQBsecretKEYvalue0123456789abcdefghij==";

template <typename Request>
void SetSecrets(Request* r) {
  (*r->mutable_secrets())["userID"] = "csi-rbd-provisioner";
  (*r->mutable_secrets())["userKey"] = kKey;
}

csi::v1::CreateVolumeRequest ValidCreate() {
  csi::v1::CreateVolumeRequest r;
  r.set_name("pvc-1b7e");
  r.mutable_capacity_range()->set_required_bytes(10 * kMiB);
  auto* cap = r.add_volume_capabilities();
  cap->mutable_mount()->set_fs_type("ext4");
  cap->mutable_access_mode()->set_mode(Mode::SINGLE_NODE_WRITER);
  (*r.mutable_parameters())["clusterID"] = "rook-ceph";
  (*r.mutable_parameters())["pool"] = "rbd";
  SetSecrets(&r);
  return r;
}

void ExpectInvalid(const Result<CreateVolumeParams>& r, const std::string& field) {
  ASSERT_FALSE(r.ok()) << field;
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find(field), std::string::npos) << r.status().message();
  EXPECT_EQ(r.status().message().find(kKey), std::string::npos);
}

TEST(ImageFeatures, DefaultIsCephCsis) {
  auto bits = ParseImageFeatures(kDefaultImageFeatures);
  ASSERT_TRUE(bits.ok());
  EXPECT_EQ(*bits, RBD_FEATURE_LAYERING | RBD_FEATURE_EXCLUSIVE_LOCK | RBD_FEATURE_OBJECT_MAP | RBD_FEATURE_FAST_DIFF);
  EXPECT_EQ(*ParseImageFeatures("layering"), RBD_FEATURE_LAYERING);
  EXPECT_EQ(*ParseImageFeatures(" layering , deep-flatten,"), RBD_FEATURE_LAYERING | RBD_FEATURE_DEEP_FLATTEN);
  EXPECT_EQ(*ParseImageFeatures(""), 0u);
}

TEST(ImageFeatures, RejectsUnknownAndMissingDependencies) {
  for (const char* bad : {"layering,bogus", "striping", "object-map", "layering,fast-diff", "journaling"}) {
    auto bits = ParseImageFeatures(bad);
    ASSERT_FALSE(bits.ok()) << bad;
    EXPECT_EQ(bits.status().code(), Code::kInvalidArgument);
    EXPECT_NE(bits.status().message().find("parameters.imageFeatures"), std::string::npos);
  }
}

TEST(VolumeSize, RoundsUpToMiBWithinLimit) {
  csi::v1::CapacityRange range;
  EXPECT_EQ(*VolumeSizeBytes(nullptr), kDefaultVolumeBytes);
  EXPECT_EQ(*VolumeSizeBytes(&range), kDefaultVolumeBytes);
  range.set_required_bytes(1);
  EXPECT_EQ(*VolumeSizeBytes(&range), kMiB);
  range.set_required_bytes(5 * kMiB);
  EXPECT_EQ(*VolumeSizeBytes(&range), 5 * kMiB);
  range.set_required_bytes(0);
  range.set_limit_bytes(3 * kMiB);
  EXPECT_EQ(*VolumeSizeBytes(&range), 3 * kMiB);
  range.set_required_bytes(kMiB + 1);
  range.set_limit_bytes(kMiB + 2);
  EXPECT_FALSE(VolumeSizeBytes(&range).ok());  // 2 MiB after rounding exceeds the limit
  range.set_required_bytes(4 * kMiB);
  range.set_limit_bytes(2 * kMiB);
  EXPECT_FALSE(VolumeSizeBytes(&range).ok());
  range.set_required_bytes(-1);
  EXPECT_FALSE(VolumeSizeBytes(&range).ok());
}

TEST(CreateVolumeRequest, ValidParsesWithDefaults) {
  auto p = ParseCreateVolumeRequest(ValidCreate());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->name, "pvc-1b7e");
  EXPECT_EQ(p->size_bytes, 10 * kMiB);
  EXPECT_EQ(p->cluster_id, "rook-ceph");
  EXPECT_EQ(p->pool, "rbd");
  EXPECT_EQ(p->image_options.features, *ParseImageFeatures(kDefaultImageFeatures));
  EXPECT_EQ(p->secrets.user_id, "csi-rbd-provisioner");
  EXPECT_EQ(p->secrets.user_key, kKey);
  ASSERT_EQ(p->capabilities.size(), 1u);
  EXPECT_EQ(p->capabilities[0].fs_type, "ext4");
}

TEST(CreateVolumeRequest, ErrorsNameTheField) {
  auto r = ValidCreate();
  r.clear_name();
  ExpectInvalid(ParseCreateVolumeRequest(r), "name");
  r = ValidCreate();
  r.clear_volume_capabilities();
  ExpectInvalid(ParseCreateVolumeRequest(r), "volume_capabilities");
  r = ValidCreate();
  r.mutable_parameters()->erase("clusterID");
  ExpectInvalid(ParseCreateVolumeRequest(r), "parameters.clusterID");
  // Names Ceph accepts, but the node would refuse the volume IDs they make.
  for (const char* cluster : {"rook+ceph", "rook:ceph", "cluster\xc3\xa9"}) {
    r = ValidCreate();
    (*r.mutable_parameters())["clusterID"] = cluster;
    ExpectInvalid(ParseCreateVolumeRequest(r), "parameters.clusterID");
  }
  r = ValidCreate();
  r.mutable_parameters()->erase("pool");
  ExpectInvalid(ParseCreateVolumeRequest(r), "parameters.pool");
  r = ValidCreate();
  (*r.mutable_parameters())["journalPool"] = "a/b";
  ExpectInvalid(ParseCreateVolumeRequest(r), "parameters.journalPool");
  r = ValidCreate();
  (*r.mutable_parameters())["imageFeatures"] = "layering,nope";
  ExpectInvalid(ParseCreateVolumeRequest(r), "parameters.imageFeatures");
  r = ValidCreate();
  (*r.mutable_parameters())["mounter"] = "rbd";
  ExpectInvalid(ParseCreateVolumeRequest(r), "parameters.mounter");
  r = ValidCreate();
  (*r.mutable_parameters())["mapOptions"] = "nbd:io-timeout=30";
  ExpectInvalid(ParseCreateVolumeRequest(r), "parameters.mapOptions");
  r = ValidCreate();
  r.mutable_secrets()->erase("userKey");
  ExpectInvalid(ParseCreateVolumeRequest(r), "secrets: userKey");
  r = ValidCreate();
  r.mutable_secrets()->erase("userID");
  ExpectInvalid(ParseCreateVolumeRequest(r), "secrets: userID");
  r = ValidCreate();
  r.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id("");
  ExpectInvalid(ParseCreateVolumeRequest(r), "volume_content_source.snapshot.snapshot_id");
  r = ValidCreate();
  r.mutable_volume_content_source()->mutable_volume();
  ExpectInvalid(ParseCreateVolumeRequest(r), "volume_content_source.volume.volume_id");
  r = ValidCreate();
  r.mutable_volume_content_source();
  ExpectInvalid(ParseCreateVolumeRequest(r), "volume_content_source");
  r = ValidCreate();
  auto* cap = r.mutable_volume_capabilities(0);
  cap->mutable_access_mode()->set_mode(Mode::MULTI_NODE_MULTI_WRITER);  // shared ext4: unsupported
  ExpectInvalid(ParseCreateVolumeRequest(r), "volume_capabilities[0]");
}

TEST(CreateVolumeRequest, ContentSourceIsParsed) {
  auto r = ValidCreate();
  r.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(kVolumeId);
  auto p = ParseCreateVolumeRequest(r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->source.kind, ContentSource::Kind::kSnapshot);
  EXPECT_EQ(p->source.id, kVolumeId);
  EXPECT_EQ(p->source.decoded.pool_id, 2);
  r.mutable_volume_content_source()->mutable_volume()->set_volume_id(kVolumeId);
  p = ParseCreateVolumeRequest(r);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->source.kind, ContentSource::Kind::kVolume);
  // A source ID that does not decode names nothing: NOT_FOUND.
  r.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id("no-such-snapshot");
  EXPECT_EQ(ParseCreateVolumeRequest(r).status().code(), Code::kNotFound);
  EXPECT_EQ(ParseCreateVolumeRequest(ValidCreate())->source.kind, ContentSource::Kind::kNone);
}

TEST(CreateVolumeRequest, VolumeContextHasCephCsisKeys) {
  auto r = ValidCreate();
  (*r.mutable_parameters())["journalPool"] = "meta";
  (*r.mutable_parameters())["mapOptions"] = "nbd:try-netlink";
  (*r.mutable_parameters())["unmapOptions"] = "krbd:force;nbd:force";
  (*r.mutable_parameters())["dataPool"] = "ec-data";
  (*r.mutable_parameters())["mkfsOptions"] = "-m1 -E nodiscard";
  (*r.mutable_parameters())["csi.storage.k8s.io/pvc/name"] = "data";
  auto p = ParseCreateVolumeRequest(r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // As ceph-csi: the data pool too, and none of csi.storage.k8s.io/.
  std::map<std::string, std::string> want = {{"clusterID", "rook-ceph"},
                                             {"pool", "rbd"},
                                             {"imageName", "csi-vol-x"},
                                             {"journalPool", "meta"},
                                             {"mounter", "rbd-nbd"},
                                             {"mapOptions", "nbd:try-netlink"},
                                             {"unmapOptions", "krbd:force;nbd:force"},
                                             {"dataPool", "ec-data"},
                                             {"mkfsOptions", "-m1 -E nodiscard"}};
  EXPECT_EQ(VolumeContextFor(*p, "csi-vol-x"), want);
}

// As the node will check them: for each mount capability's filesystem; a
// block-only request is never formatted.
TEST(CreateVolumeRequest, MkfsOptionsAreCheckedForEveryFilesystemAsked) {
  auto r = ValidCreate();
  (*r.mutable_parameters())["mkfsOptions"] = "-K";
  ExpectInvalid(ParseCreateVolumeRequest(r), "parameters: mkfsOptions: '-K' is not an option nbdkeeper allows");
  r.mutable_volume_capabilities(0)->mutable_mount()->set_fs_type("xfs");
  auto xfs = ParseCreateVolumeRequest(r);
  ASSERT_TRUE(xfs.ok()) << xfs.status().ToString();
  EXPECT_EQ(xfs->mkfs_options, "-K");
  auto* ext4 = r.add_volume_capabilities();
  ext4->mutable_mount()->set_fs_type("ext4");
  ext4->mutable_access_mode()->set_mode(Mode::SINGLE_NODE_WRITER);
  ExpectInvalid(ParseCreateVolumeRequest(r), "for ext4");
  r.mutable_volume_capabilities()->RemoveLast();
  r.mutable_volume_capabilities(0)->mutable_block();
  EXPECT_TRUE(ParseCreateVolumeRequest(r).ok());
}

TEST(CreateVolumeRequest, StorageClassParametersAreReadOrRefusedByName) {
  auto r = ValidCreate();
  auto& params = *r.mutable_parameters();
  params["dataPool"] = "ec-data";
  params["objectSize"] = "1048576";
  params["stripeUnit"] = "65536";
  params["stripeCount"] = "8";
  params["volumeNamePrefix"] = "k8s-vol-";
  params["csi.storage.k8s.io/pvc/name"] = "data";
  params["csi.storage.k8s.io/pvc/namespace"] = "db";
  params["csi.storage.k8s.io/pv/name"] = "pvc-1b7e";
  params["csi.storage.k8s.io/provisioner-secret-name"] = "ceph";
  auto p = ParseCreateVolumeRequest(r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->image_options.data_pool, "ec-data");
  EXPECT_EQ(p->image_options.object_size, 1u << 20);
  EXPECT_EQ(p->image_options.stripe_unit, 64u << 10);
  EXPECT_EQ(p->image_options.stripe_count, 8u);
  EXPECT_EQ(p->name_prefix, "k8s-vol-");
  EXPECT_EQ(p->image_name, "");
  EXPECT_EQ(p->metadata, (std::map<std::string, std::string>{{"csi.storage.k8s.io/pv/name", "pvc-1b7e"},
                                                             {"csi.storage.k8s.io/pvc/name", "data"},
                                                             {"csi.storage.k8s.io/pvc/namespace", "db"}}));

  r = ValidCreate();
  (*r.mutable_parameters())["fooBar"] = "1";
  ExpectInvalid(ParseCreateVolumeRequest(r), "parameters.fooBar: not a parameter nbdkeeper knows");
  r = ValidCreate();
  (*r.mutable_parameters())["thickProvision"] = "true";
  ExpectInvalid(ParseCreateVolumeRequest(r), "parameters.thickProvision: not supported");
  r = ValidCreate();
  (*r.mutable_parameters())["mkfsOptions"] = "-d /etc";
  ExpectInvalid(ParseCreateVolumeRequest(r), "parameters: mkfsOptions: '-d' is not an option nbdkeeper allows");
  r = ValidCreate();
  (*r.mutable_parameters())["stripeUnit"] = "65536";
  ExpectInvalid(ParseCreateVolumeRequest(r), "parameters.stripeCount");
  r = ValidCreate();
  (*r.mutable_parameters())["unmapOptions"] = "nbd:force;rbd:force";  // no such mounter
  ExpectInvalid(ParseCreateVolumeRequest(r), "parameters.unmapOptions");
  // The last one is too long with a uuid after it.
  for (const std::string& prefix : {std::string(), std::string("k8s/"), std::string("-vol-"), std::string(230, 'v')}) {
    r = ValidCreate();
    (*r.mutable_parameters())["volumeNamePrefix"] = prefix;
    ExpectInvalid(ParseCreateVolumeRequest(r), "parameters.volumeNamePrefix");
  }
  r = ValidCreate();
  (*r.mutable_parameters())["volumeNamePrefix"] = "k8s-";
  (*r.mutable_parameters())["nbdkeeper.io/imageName"] = "db-data";
  ExpectInvalid(ParseCreateVolumeRequest(r), "parameters.volumeNamePrefix");
}

// As ceph-csi clones with them: a restore or clone is laid out by the
// StorageClass too.
TEST(CreateVolumeRequest, LayoutIsARestoresOrClonesToo) {
  for (bool snapshot : {true, false}) {
    auto r = ValidCreate();
    if (snapshot) {
      r.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(kVolumeId);
    } else {
      r.mutable_volume_content_source()->mutable_volume()->set_volume_id(kVolumeId);
    }
    (*r.mutable_parameters())["dataPool"] = "ec-data";
    (*r.mutable_parameters())["objectSize"] = "1048576";
    (*r.mutable_parameters())["stripeUnit"] = "65536";
    (*r.mutable_parameters())["stripeCount"] = "2";
    (*r.mutable_parameters())["volumeNamePrefix"] = "k8s-";
    auto p = ParseCreateVolumeRequest(r);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(p->image_options.data_pool, "ec-data");
    EXPECT_EQ(p->image_options.object_size, 1u << 20);
    EXPECT_EQ(p->image_options.stripe_unit, 64u << 10);
    EXPECT_EQ(p->image_options.stripe_count, 2u);
  }
}

TEST(DeleteVolumeRequest, UndecodableIdIsNoVolume) {
  csi::v1::DeleteVolumeRequest r;
  SetSecrets(&r);
  r.set_volume_id("not-a-ceph-csi-id");
  auto p = ParseDeleteVolumeRequest(r);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(*p);
  r.set_volume_id(kVolumeId);
  p = ParseDeleteVolumeRequest(r);
  ASSERT_TRUE(p.ok() && *p);
  EXPECT_EQ((*p)->decoded.pool_id, 2);
  r.clear_volume_id();
  EXPECT_EQ(ParseDeleteVolumeRequest(r).status().code(), Code::kInvalidArgument);
  r.set_volume_id(kVolumeId);
  r.mutable_secrets()->erase("userKey");
  EXPECT_EQ(ParseDeleteVolumeRequest(r).status().code(), Code::kInvalidArgument);
}

TEST(ControllerExpandRequest, NodeExpansionUnlessBlock) {
  csi::v1::ControllerExpandVolumeRequest r;
  SetSecrets(&r);
  r.set_volume_id(kVolumeId);
  EXPECT_EQ(ParseControllerExpandRequest(r).status().code(), Code::kInvalidArgument);  // no capacity_range
  r.mutable_capacity_range()->set_required_bytes(3 * kMiB - 1);
  auto p = ParseControllerExpandRequest(r);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->size_bytes, 3 * kMiB);
  EXPECT_TRUE(p->node_expansion_required);
  r.mutable_volume_capability()->mutable_block();
  r.mutable_volume_capability()->mutable_access_mode()->set_mode(Mode::SINGLE_NODE_WRITER);
  p = ParseControllerExpandRequest(r);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->node_expansion_required);
}

TEST(ValidateRequest, UnsupportedCapabilityIsAnAnswerNotAnError) {
  csi::v1::ValidateVolumeCapabilitiesRequest r;
  SetSecrets(&r);
  r.set_volume_id(kVolumeId);
  EXPECT_EQ(ParseValidateRequest(r).status().code(), Code::kInvalidArgument);  // no capabilities
  auto* cap = r.add_volume_capabilities();
  cap->mutable_mount()->set_fs_type("ext4");
  cap->mutable_access_mode()->set_mode(Mode::SINGLE_NODE_WRITER);
  auto p = ParseValidateRequest(r);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->capabilities.ok());
  cap->mutable_access_mode()->set_mode(Mode::MULTI_NODE_MULTI_WRITER);
  p = ParseValidateRequest(r);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->capabilities.ok());
}

// The Controller's secrets keep to the Node's rules (ceph/cephx_credentials.h):
// it writes the key to a key file for librados, as the Node does for rbd-nbd.
TEST(ControllerSecrets, FollowTheCephxRules) {
  auto secrets_with = [](const char* field, const std::string& value) {
    auto r = ValidCreate();
    (*r.mutable_secrets())[field] = value;
    return ParseCreateVolumeRequest(r);
  };
  auto echoed = secrets_with("userKey", std::string(kKey) + "\n");
  ASSERT_TRUE(echoed.ok()) << echoed.status().ToString();
  EXPECT_EQ(echoed->secrets.user_key, kKey);
  ExpectInvalid(secrets_with("userKey", std::string(kKey).insert(10, "\n")),
                "secrets: userKey: not a base64 cephx key");
  ExpectInvalid(secrets_with("userKey", std::string(kKey) + "'; rm -rf /"), "secrets: userKey: not a base64");
  ExpectInvalid(secrets_with("userKey", " \n"), "secrets: userKey: missing");
  ExpectInvalid(secrets_with("userID", "client.csi"), "secrets: userID: 'client.csi' names the user");
  ExpectInvalid(secrets_with("userID", "csi\trbd"), "secrets: userID: contains whitespace");
}

// Every field an error quotes, at 64 KiB with a terminal escape: the
// message quotes it bounded (QuoteField) and stays one inert line.
TEST(ControllerRequests, HugeFieldsAreQuotedBounded) {
  const std::string huge = "\x1b[2J" + std::string(65532, 'a');
  auto create_with = [](std::function<void(csi::v1::CreateVolumeRequest*)> edit) {
    auto r = ValidCreate();
    edit(&r);
    return ParseCreateVolumeRequest(r).status();
  };
  csi::v1::ValidateVolumeCapabilitiesRequest validate;
  SetSecrets(&validate);
  validate.set_volume_id(huge);
  validate.add_volume_capabilities();
  const std::vector<Status> answers = {
      create_with([&](auto* r) { (*r->mutable_parameters())["imageFeatures"] = huge; }),
      create_with([&](auto* r) { (*r->mutable_parameters())["mounter"] = huge; }),
      create_with([&](auto* r) { (*r->mutable_parameters())["mapOptions"] = "nbd:" + huge; }),
      create_with([&](auto* r) { r->mutable_volume_content_source()->mutable_volume()->set_volume_id(huge); }),
      create_with([&](auto* r) { r->mutable_volume_capabilities(0)->mutable_mount()->set_fs_type(huge); }),
      ParseValidateRequest(validate).status(),
  };
  for (const Status& s : answers) {
    EXPECT_FALSE(s.ok());
    EXPECT_LT(s.message().size(), 1024u) << s.message().substr(0, 400);
    EXPECT_NE(s.message().find("'\\x1b[2Jaaa"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("aaa' (65536 bytes)"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace nbdk
