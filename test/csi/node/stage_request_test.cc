// NodeStageVolume's request read and checked (csi/node/node_request.h).
#include <gtest/gtest.h>

#include <functional>

#include "csi/mkfs_options.h"
#include "csi/node/node_request.h"
#include "csi/storage_class_keys.h"
#include "test/csi/node/node_requests.h"

namespace nbdk {
namespace {

TEST(StageRequestTest, AnEncryptedVolumeCarriesItsKmsAndTheSecretOnlyInItsHolder) {
  auto req = ValidStage();
  (*req.mutable_volume_context())["encrypted"] = "true";
  (*req.mutable_volume_context())["encryptionKMSID"] = "secrets-metadata";
  (*req.mutable_secrets())["encryptionPassphrase"] = "SECRET-passphrase ";
  auto r = ParseStageRequest(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->encryption.has_value());
  EXPECT_EQ(r->encryption->kms_id, "secrets-metadata");
  ASSERT_NE(r->encryption->passphrase, nullptr);
  EXPECT_EQ(r->encryption->passphrase->Reveal(), "SECRET-passphrase ");  // every byte counts

  (*req.mutable_volume_context())["encryptionKMSID"] = "";
  (*req.mutable_volume_context())["encryptionType"] = "block";
  r = ParseStageRequest(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->encryption->kms_id, "default");

  (*req.mutable_volume_context())["encrypted"] = "false";
  r = ParseStageRequest(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->encryption.has_value());
  EXPECT_FALSE(ParseStageRequest(ValidStage())->encryption.has_value());
}

TEST(StageRequestTest, AnEncryptionErrorNeverShowsTheSecret) {
  for (const char* type : {"file", "luks", ""}) {
    auto req = ValidStage();
    (*req.mutable_volume_context())["encrypted"] = "true";
    (*req.mutable_volume_context())["encryptionType"] = type;
    (*req.mutable_secrets())["encryptionPassphrase"] = "SECRET-passphrase";
    auto r = ParseStageRequest(req);
    ASSERT_FALSE(r.ok()) << type;
    EXPECT_NE(r.status().message().find("encryptionType"), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().message().find("SECRET"), std::string::npos) << r.status().message();
  }
}

TEST(StageRequestTest, ParsesADynamicCephCsiVolume) {
  auto r = ParseStageRequest(ValidStage());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->volume_id, kVolumeId);
  EXPECT_EQ(r->staging_target_path, kStaging);
  EXPECT_EQ(r->capability.fs_type, "ext4");
  EXPECT_EQ(r->user_id, "csi-rbd-node");
  EXPECT_EQ(r->user_key, kKey);
  EXPECT_FALSE(r->static_volume);
  ASSERT_TRUE(r->decoded_id.has_value());
  EXPECT_EQ(r->decoded_id->pool_id, 2);
  EXPECT_EQ(r->cluster_id, "rook-ceph");
  EXPECT_EQ(r->pool, "replicapool");
  EXPECT_EQ(r->image_name, "csi-vol-b0a3c3d5-1d1a-4a9e-9a8f-2d7e0d9b7d51");
  EXPECT_EQ(r->map_options, (std::vector<std::string>{"--try-netlink", "--io-timeout=0"}));
  EXPECT_EQ(r->unmap_options_csv, "force");
}

TEST(StageRequestTest, ParsesAStaticVolume) {
  auto req = ValidStage();
  req.set_volume_id("my-image");
  auto& ctx = *req.mutable_volume_context();
  ctx.erase("imageName");
  ctx.erase("mounter");
  ctx["staticVolume"] = "true";
  ctx["radosNamespace"] = "ns";
  auto r = ParseStageRequest(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->static_volume);
  EXPECT_FALSE(r->decoded_id.has_value());
  EXPECT_EQ(r->image_name, "my-image");
  EXPECT_EQ(r->cluster_id, "rook-ceph");
  EXPECT_EQ(r->rados_namespace, "ns");
}

// What ceph-csi's Controller returns as the volume context (the
// StorageClass's parameters, its own keys) and what a static volume's
// PersistentVolume says all pass; the values of the keys the Node does not
// read are not looked at.
TEST(StageRequestTest, EveryKnownContextKeyPassesAnUnknownOneIsNamed) {
  auto req = ValidStage();
  auto& ctx = *req.mutable_volume_context();
  for (const StorageClassKey& key : StorageClassKeys()) {
    if (!ctx.contains(std::string(key.name))) ctx[std::string(key.name)] = "";
  }
  ctx["mounter"] = "rbd-nbd";
  ctx["mapOptions"] = "";
  ctx["staticVolume"] = "false";
  ctx["encrypted"] = "false";
  ctx["csi.storage.k8s.io/pvc/namespace"] = "db";
  auto ok = ParseStageRequest(req);
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();

  for (const char* unknown : {"fooBar", "DataPool", "migration", "volumeHealerContext", "csi.storage.k8s.io"}) {
    auto bad = ValidStage();
    (*bad.mutable_volume_context())[unknown] = "true";
    ExpectError(ParseStageRequest(bad), Code::kInvalidArgument,
                std::string("volume_context.") + unknown + ": not a key nbdkeeper knows");
  }
  // The first offender in byte order, whatever the map's order.
  auto two = ValidStage();
  (*two.mutable_volume_context())["zz"] = "1";
  (*two.mutable_volume_context())["aa"] = "1";
  ExpectError(ParseStageRequest(two), Code::kInvalidArgument, "volume_context.aa: ");
}

// ceph-csi's defaults without mkfsOptions, the checked options with it; a
// block volume is never formatted, so its mkfsOptions is not read.
TEST(StageRequestTest, MkfsOptionsAreCheckedForTheCapabilitysFilesystem) {
  auto plain = ParseStageRequest(ValidStage());
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->mkfs_options, DefaultMkfsOptions("ext4"));

  auto req = ValidStage();
  (*req.mutable_volume_context())["mkfsOptions"] = "-m1 -O ^metadata_csum";
  auto given = ParseStageRequest(req);
  ASSERT_TRUE(given.ok()) << given.status().ToString();
  EXPECT_EQ(given->mkfs_options, (std::vector<std::string>{"-m", "1", "-O", "^metadata_csum"}));

  // xfs's options are not ext4's.
  (*req.mutable_volume_context())["mkfsOptions"] = "-K";
  ExpectError(ParseStageRequest(req), Code::kInvalidArgument,
              "volume_context: mkfsOptions: '-K' is not an option nbdkeeper allows for ext4");
  req.mutable_volume_capability()->mutable_mount()->set_fs_type("xfs");
  auto xfs = ParseStageRequest(req);
  ASSERT_TRUE(xfs.ok()) << xfs.status().ToString();
  EXPECT_EQ(xfs->mkfs_options, (std::vector<std::string>{"-K"}));

  req.mutable_volume_capability()->mutable_block();
  (*req.mutable_volume_context())["mkfsOptions"] = "-d /etc";
  auto block = ParseStageRequest(req);
  ASSERT_TRUE(block.ok()) << block.status().ToString();
  EXPECT_TRUE(block->mkfs_options.empty());
}

TEST(StageRequestTest, KeyIsTrimmedOfTheNewlineEchoLeaves) {
  auto req = ValidStage();
  (*req.mutable_secrets())["userKey"] = std::string(kKey) + "\n";
  auto r = ParseStageRequest(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->user_key, kKey);
}

struct Case {
  const char* name;
  std::function<void(csi::v1::NodeStageVolumeRequest*)> mutate;
  Code code;
  const char* mentions;
};

// Every invalid stage request: the error names the field, has the code the
// spec asks for, and never contains the key.
TEST(StageRequestTest, EachInvalidFieldIsNamedAndTheKeyNeverAppears) {
  auto ctx = [](csi::v1::NodeStageVolumeRequest* r) { return r->mutable_volume_context(); };
  const Code kInvalid = Code::kInvalidArgument;
  const std::vector<Case> cases = {
      {"no volume_id", [](auto* r) { r->clear_volume_id(); }, kInvalid, "volume_id: missing"},
      {"long volume_id", [](auto* r) { r->set_volume_id(std::string(129, 'a')); }, kInvalid, "longer than 128"},
      {"volume_id with /", [](auto* r) { r->set_volume_id("a/b"); }, kInvalid, "only [A-Za-z0-9._-] allowed"},
      {"volume_id dot", [](auto* r) { r->set_volume_id(".."); }, kInvalid, "starts with '.'"},
      {"undecodable volume_id", [](auto* r) { r->set_volume_id("0001-00zz-x"); }, kInvalid, "volume_id: "},
      {"no staging path", [](auto* r) { r->clear_staging_target_path(); }, kInvalid, "staging_target_path: missing"},
      {"relative staging", [](auto* r) { r->set_staging_target_path("var/x"); }, kInvalid, "not an absolute path"},
      {"dotdot staging", [](auto* r) { r->set_staging_target_path("/var/../etc"); }, kInvalid,
       "staging_target_path: '/var/../etc' is not clean"},
      {"dot staging", [](auto* r) { r->set_staging_target_path("/var/./x"); }, kInvalid, "not clean"},
      {"double slash", [](auto* r) { r->set_staging_target_path("/var//x"); }, kInvalid, "empty component"},
      {"trailing slash", [](auto* r) { r->set_staging_target_path("/var/x/"); }, kInvalid, "trailing '/'"},
      {"root staging", [](auto* r) { r->set_staging_target_path("/"); }, kInvalid, "root directory"},
      {"NUL in staging", [](auto* r) { r->set_staging_target_path(std::string("/var/x\0y", 8)); }, kInvalid,
       "staging_target_path: contains a NUL"},
      {"huge staging", [](auto* r) { r->set_staging_target_path("/" + std::string(4096, 'a')); }, kInvalid,
       "longer than 4096"},
      {"no capability", [](auto* r) { r->clear_volume_capability(); }, kInvalid, "volume_capability: missing"},
      {"no access type", [](auto* r) { r->mutable_volume_capability()->clear_mount(); }, kInvalid,
       "one of block or mount"},
      {"no access mode", [](auto* r) { r->mutable_volume_capability()->clear_access_mode(); }, kInvalid,
       "volume_capability.access_mode: missing"},
      {"unsupported mode", [](auto* r) { SetMount(r->mutable_volume_capability(), Mode::MULTI_NODE_SINGLE_WRITER); },
       Code::kFailedPrecondition, "MULTI_NODE_SINGLE_WRITER"},
      {"RWX filesystem", [](auto* r) { SetMount(r->mutable_volume_capability(), Mode::MULTI_NODE_MULTI_WRITER); },
       Code::kFailedPrecondition, "only for block"},
      {"unsupported fs", [](auto* r) { r->mutable_volume_capability()->mutable_mount()->set_fs_type("zfs"); },
       Code::kFailedPrecondition, "fs_type: 'zfs'"},
      {"no secrets", [](auto* r) { r->clear_secrets(); }, kInvalid, "secrets: userID: missing"},
      {"no userID", [](auto* r) { r->mutable_secrets()->erase("userID"); }, kInvalid, "secrets: userID: missing"},
      {"bad userID", [](auto* r) { (*r->mutable_secrets())["userID"] = "-x"; }, kInvalid, "secrets: userID"},
      {"prefixed userID", [](auto* r) { (*r->mutable_secrets())["userID"] = "client.csi"; }, kInvalid,
       "secrets: userID: 'client.csi' names the user with the 'client.' prefix"},
      {"no userKey", [](auto* r) { r->mutable_secrets()->erase("userKey"); }, kInvalid, "secrets: userKey: missing"},
      {"blank userKey", [](auto* r) { (*r->mutable_secrets())["userKey"] = " \n"; }, kInvalid,
       "secrets: userKey: missing"},
      {"key with space", [](auto* r) { (*r->mutable_secrets())["userKey"] = std::string(kKey) + " x"; }, kInvalid,
       "secrets: userKey: not a base64"},
      {"key with quote", [](auto* r) { (*r->mutable_secrets())["userKey"] = std::string(kKey) + "'"; }, kInvalid,
       "secrets: userKey"},
      {"bad staticVolume", [&](auto* r) { (*ctx(r))["staticVolume"] = "yes"; }, kInvalid,
       "volume_context: staticVolume: 'yes' is not a boolean"},
      {"static without pool",
       [&](auto* r) {
         (*ctx(r))["staticVolume"] = "true";
         ctx(r)->erase("pool");
       },
       kInvalid, "volume_context: pool: required for a static volume"},
      {"static without clusterID",
       [&](auto* r) {
         (*ctx(r))["staticVolume"] = "1";
         ctx(r)->erase("clusterID");
       },
       kInvalid, "volume_context: clusterID: required"},
      {"krbd mounter", [&](auto* r) { (*ctx(r))["mounter"] = "rbd"; }, kInvalid,
       "volume_context: mounter: 'rbd' is not supported"},
      {"encrypted without its secret", [&](auto* r) { (*ctx(r))["encrypted"] = "true"; }, kInvalid,
       "secrets: encryptionPassphrase: required for an encrypted volume (KMS 'default')"},
      {"encrypted not a boolean", [&](auto* r) { (*ctx(r))["encrypted"] = "yes"; }, kInvalid,
       "volume_context: encrypted: 'yes' is not a boolean"},
      {"fscrypt",
       [&](auto* r) {
         (*ctx(r))["encrypted"] = "true";
         (*ctx(r))["encryptionType"] = "file";
         (*r->mutable_secrets())["encryptionPassphrase"] = "s";
       },
       kInvalid, "volume_context: encryptionType: 'file': fscrypt not supported"},
      {"no imageName nor clusterID",
       [&](auto* r) {
         ctx(r)->erase("imageName");
         ctx(r)->erase("clusterID");
       },
       kInvalid, "neither imageName nor clusterID"},
      {"pool with /", [&](auto* r) { (*ctx(r))["pool"] = "a/b"; }, kInvalid, "volume_context: pool: 'a/b'"},
      {"image with @", [&](auto* r) { (*ctx(r))["imageName"] = "img@snap"; }, kInvalid, "volume_context: imageName"},
      {"namespace with newline", [&](auto* r) { (*ctx(r))["radosNamespace"] = "a\nb"; }, kInvalid,
       "volume_context: radosNamespace: contains whitespace or a control character"},
      {"journalPool with /", [&](auto* r) { (*ctx(r))["journalPool"] = "/"; }, kInvalid, "volume_context: journalPool"},
      {"pool that reads as an option", [&](auto* r) { (*ctx(r))["pool"] = "--conf=x"; }, kInvalid,
       "volume_context: pool: '--conf=x' starts with '-'"},
      {"io_timeout spelled with '_'", [&](auto* r) { (*ctx(r))["mapOptions"] = "nbd:io_timeout=30"; }, kInvalid,
       "map option 'io_timeout': only 0 is allowed"},
      {"admin socket path", [&](auto* r) { (*ctx(r))["mapOptions"] = "nbd:admin-socket=/etc/passwd"; }, kInvalid,
       "map option 'admin-socket' is not allowed"},
      {"io-timeout", [&](auto* r) { (*ctx(r))["mapOptions"] = "nbd:io-timeout=30"; }, kInvalid,
       "volume_context: mapOptions: map option 'io-timeout': only 0 is allowed"},
      {"unknown mounter in mapOptions", [&](auto* r) { (*ctx(r))["mapOptions"] = "fuse:x"; }, kInvalid,
       "volume_context: mapOptions: unknown mounter type 'fuse'"},
      {"bad unmapOptions", [&](auto* r) { (*ctx(r))["unmapOptions"] = "nbd:a b"; }, kInvalid,
       "volume_context: unmapOptions: only letters"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto req = ValidStage();
    c.mutate(&req);
    auto r = ParseStageRequest(req);
    ExpectError(r, c.code, c.mentions);
    EXPECT_EQ(r.status().ToString().find("AQBsecret"), std::string::npos) << r.status().ToString();
  }
}

// A field of any size or content is quoted by QuoteField: escaped, cut to
// its head and tail with its length, so the message stays short and inert.
TEST(StageRequestTest, HugeOrHostileFieldsAreQuotedBounded) {
  const std::string huge = "\x1b[2J\n" + std::string(65531, 'a');
  auto ctx = [](csi::v1::NodeStageVolumeRequest* r) { return r->mutable_volume_context(); };
  const std::vector<std::function<void(csi::v1::NodeStageVolumeRequest*)>> edits = {
      [&](auto* r) { r->mutable_volume_capability()->mutable_mount()->set_fs_type(huge); },
      [&](auto* r) { (*ctx(r))["mounter"] = huge; },
      [&](auto* r) { (*ctx(r))["staticVolume"] = huge; },
      [&](auto* r) { (*ctx(r))["mapOptions"] = "nbd:io_timeout=" + huge; },
      [&](auto* r) { (*ctx(r))["mapOptions"] = "nbd:" + huge; },
      [&](auto* r) { (*ctx(r))["mapOptions"] = huge + ":x"; },
      [&](auto* r) { (*ctx(r))[huge] = "x"; },
  };
  for (size_t i = 0; i < edits.size(); ++i) {
    SCOPED_TRACE(i);
    auto req = ValidStage();
    edits[i](&req);
    auto r = ParseStageRequest(req);
    ASSERT_FALSE(r.ok());
    const std::string& m = r.status().message();
    EXPECT_LT(m.size(), 1024u) << m.substr(0, 400);
    EXPECT_NE(m.find("'\\x1b[2J\\naaa"), std::string::npos) << m;
    EXPECT_NE(m.find("aaa' (65536 bytes)"), std::string::npos) << m;
    for (char c : m) ASSERT_GE(static_cast<unsigned char>(c), 0x20) << m;
  }
  // A path is at most 4096 bytes; one that is not clean is quoted the same way.
  auto req = ValidStage();
  req.set_staging_target_path("/" + std::string(4000, 'p') + "/../x");
  auto r = ParseStageRequest(req);
  ASSERT_FALSE(r.ok());
  EXPECT_LT(r.status().message().size(), 400u);
  EXPECT_NE(r.status().message().find("p/../x' (4006 bytes) is not clean"), std::string::npos) << r.status().message();
}

TEST(StageRequestTest, BlockVolumeWithMultiNodeWriter) {
  auto req = ValidStage();
  req.mutable_volume_capability()->mutable_block();
  req.mutable_volume_capability()->mutable_access_mode()->set_mode(Mode::MULTI_NODE_MULTI_WRITER);
  auto r = ParseStageRequest(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->capability.block);
  EXPECT_TRUE(r->capability.multi_node);
}

}  // namespace
}  // namespace nbdk
