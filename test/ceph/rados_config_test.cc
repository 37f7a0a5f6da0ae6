#include "ceph/rados_config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace nbdk {
namespace {

class RadosConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nbdk-rados-config-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    keyfile_ = dir_ + "/key";
    std::ofstream(keyfile_) << "AQBz1ZlhAAAAABAAqXR2Y1aU1C3lH7OGvXu+Xw==\n";
  }
  void TearDown() override {
    unlink(keyfile_.c_str());
    rmdir(dir_.c_str());
  }
  RadosConfig Good() const {
    RadosConfig c;
    c.monitors = {"10.0.0.1:6789", "10.0.0.2:6789"};
    c.user_id = "csi-rbd-node";
    c.keyfile = keyfile_;
    return c;
  }
  static void ExpectNames(const Status& s, Code code, const std::string& field) {
    EXPECT_EQ(s.code(), code) << s.ToString();
    EXPECT_NE(s.message().find(field), std::string::npos) << s.ToString();
  }

  std::string dir_, keyfile_;
};

TEST_F(RadosConfigTest, GoodConfigValidates) { EXPECT_TRUE(ValidateRadosConfig(Good()).ok()); }

TEST_F(RadosConfigTest, MissingUserIsNamed) {
  RadosConfig c = Good();
  c.user_id.clear();
  ExpectNames(ValidateRadosConfig(c), Code::kInvalidArgument, "user_id");
}

TEST_F(RadosConfigTest, UserWithClientPrefixIsRejected) {
  RadosConfig c = Good();
  c.user_id = "client.admin";
  ExpectNames(ValidateRadosConfig(c), Code::kInvalidArgument, "user_id");
  c.user_id = "a b";
  ExpectNames(ValidateRadosConfig(c), Code::kInvalidArgument, "user_id");
}

TEST_F(RadosConfigTest, MissingKeyfileIsNamed) {
  RadosConfig c = Good();
  c.keyfile.clear();
  ExpectNames(ValidateRadosConfig(c), Code::kInvalidArgument, "keyfile");
}

TEST_F(RadosConfigTest, NonexistentKeyfileNamesFieldAndPath) {
  RadosConfig c = Good();
  c.keyfile = dir_ + "/absent";
  Status s = ValidateRadosConfig(c);
  ExpectNames(s, Code::kNotFound, "keyfile");
  EXPECT_NE(s.message().find(c.keyfile), std::string::npos) << s.ToString();
}

TEST_F(RadosConfigTest, DirectoryAsKeyfileIsRejected) {
  RadosConfig c = Good();
  c.keyfile = dir_;
  ExpectNames(ValidateRadosConfig(c), Code::kInvalidArgument, "keyfile");
}

TEST_F(RadosConfigTest, FifoAsKeyfileFailsWithoutBlocking) {
  RadosConfig c = Good();
  c.keyfile = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(c.keyfile.c_str(), 0600), 0);
  Status s = ValidateRadosConfig(c);
  unlink(c.keyfile.c_str());
  ExpectNames(s, Code::kInvalidArgument, "keyfile");
}

TEST_F(RadosConfigTest, UnreadableKeyfileIsNamed) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads a mode-000 file";
  ASSERT_EQ(chmod(keyfile_.c_str(), 0), 0);
  ExpectNames(ValidateRadosConfig(Good()), Code::kFailedPrecondition, "keyfile");
}

TEST_F(RadosConfigTest, KeyfileBehindAFileIsNamed) {
  RadosConfig c = Good();
  c.keyfile = keyfile_ + "/key";  // ENOTDIR, also for root
  Status s = ValidateRadosConfig(c);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("keyfile " + c.keyfile), std::string::npos) << s.ToString();
}

TEST_F(RadosConfigTest, NonexistentCephConfIsNamed) {
  RadosConfig c = Good();
  c.ceph_conf = dir_ + "/ceph.conf";
  ExpectNames(ValidateRadosConfig(c), Code::kNotFound, "ceph_conf");
}

TEST_F(RadosConfigTest, CephConfPathListIsRejected) {
  RadosConfig c = Good();
  c.ceph_conf = keyfile_ + "," + keyfile_;
  ExpectNames(ValidateRadosConfig(c), Code::kInvalidArgument, "ceph_conf");
}

TEST_F(RadosConfigTest, BadMonitorEntryIsNamedByIndex) {
  RadosConfig c = Good();
  c.monitors.push_back("");
  ExpectNames(ValidateRadosConfig(c), Code::kInvalidArgument, "monitors[2]");
  c.monitors = {"10.0.0.1:6789 10.0.0.2:6789"};
  ExpectNames(ValidateRadosConfig(c), Code::kInvalidArgument, "monitors[0]");
}

TEST_F(RadosConfigTest, TimeoutOutOfRangeIsNamed) {
  RadosConfig c = Good();
  c.timeout_s = 0;
  ExpectNames(ValidateRadosConfig(c), Code::kInvalidArgument, "timeout_s");
  c.timeout_s = 100000;
  ExpectNames(ValidateRadosConfig(c), Code::kInvalidArgument, "timeout_s");
}

// An op outlasts Ceph's re-send to the next OSD (heartbeat grace 20 s +
// interval 6 s): a failing-over cluster is slow, not an error.
TEST_F(RadosConfigTest, AnOperationOutlastsAnOsdFailover) {
  RadosConfig c = Good();
  c.timeout_s = 10;
  EXPECT_EQ(OpTimeoutS(c), 36);
  c.timeout_s = 1;
  EXPECT_GT(OpTimeoutS(c), 26);
}

TEST_F(RadosConfigTest, CacheKeyIgnoresMonitorOrderButNotUserOrConf) {
  RadosConfig a = Good(), b = Good();
  std::swap(b.monitors[0], b.monitors[1]);
  EXPECT_EQ(a.CacheKey(), b.CacheKey());
  b.keyfile = "/elsewhere";
  EXPECT_EQ(a.CacheKey(), b.CacheKey());
  b.user_id = "other";
  EXPECT_NE(a.CacheKey(), b.CacheKey());
  b = Good();
  b.ceph_conf = "/etc/ceph/other.conf";
  EXPECT_NE(a.CacheKey(), b.CacheKey());
  b = Good();
  b.monitors.pop_back();
  EXPECT_NE(a.CacheKey(), b.CacheKey());
}

TEST_F(RadosConfigTest, DescribeNamesMonitorsAndUser) {
  std::string d = Good().Describe();
  EXPECT_NE(d.find("10.0.0.1:6789,10.0.0.2:6789"), std::string::npos) << d;
  EXPECT_NE(d.find("client.csi-rbd-node"), std::string::npos) << d;
  EXPECT_EQ(d.find("AQB"), std::string::npos) << d;
}

TEST_F(RadosConfigTest, KeyFingerprintComparesKeysNotFiles) {
  Result<std::string> a = KeyFingerprint(keyfile_);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->find("AQB"), std::string::npos) << "the fingerprint contains the key";
  const std::string other = dir_ + "/other";
  std::ofstream(other) << "\n  AQBz1ZlhAAAAABAAqXR2Y1aU1C3lH7OGvXu+Xw==\t\n";
  Result<std::string> same = KeyFingerprint(other);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*a, *same);
  std::ofstream(other, std::ios::trunc) << "AQBz1ZlhAAAAABAAqXR2Y1aU1C3lH7OGvXu+Xx==";
  Result<std::string> different = KeyFingerprint(other);
  ASSERT_TRUE(different.ok());
  EXPECT_NE(*a, *different);
  unlink(other.c_str());
}

TEST_F(RadosConfigTest, KeyFingerprintRejectsEmptyHugeAndMissingFiles) {
  const std::string path = dir_ + "/bad";
  std::ofstream(path) << " \n";
  ExpectNames(KeyFingerprint(path).status(), Code::kInvalidArgument, "keyfile " + path);
  std::ofstream(path, std::ios::trunc) << std::string(100000, 'A');
  ExpectNames(KeyFingerprint(path).status(), Code::kInvalidArgument, "keyfile " + path);
  unlink(path.c_str());
  ExpectNames(KeyFingerprint(path).status(), Code::kNotFound, "keyfile " + path);
}

TEST(StatusFromRadosTest, MapsErrnoWithContext) {
  Status s = StatusFromRados(-ENOENT, "open pool rbd");
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("open pool rbd"), std::string::npos);
  EXPECT_EQ(StatusFromRados(-ESHUTDOWN, "x").code(), Code::kUnavailable);
  EXPECT_EQ(StatusFromRados(-ENOTCONN, "x").code(), Code::kUnavailable);
  EXPECT_EQ(StatusFromRados(-ETIMEDOUT, "x").code(), Code::kDeadlineExceeded);
  EXPECT_EQ(StatusFromRados(-EACCES, "x").code(), Code::kFailedPrecondition);
  EXPECT_EQ(StatusFromRados(-EIO, "x").code(), Code::kIoError);
}

TEST(IsConnectionErrorTest, OnlyConnectionLevelErrors) {
  EXPECT_TRUE(IsConnectionError(-ESHUTDOWN));
  EXPECT_TRUE(IsConnectionError(-ENOTCONN));
  EXPECT_TRUE(IsConnectionError(ETIMEDOUT));
  EXPECT_FALSE(IsConnectionError(-ENOENT));
  EXPECT_FALSE(IsConnectionError(-EBUSY));
  EXPECT_FALSE(IsConnectionError(0));
}

TEST(RadosConfigForImageTest, CopiesTheClusterAndUserFields) {
  ImageSpec spec;
  spec.pool = "rbd";
  spec.image = "img";
  spec.monitors = {"10.0.0.1:6789"};
  spec.ceph_conf = "/etc/ceph/ceph.conf";
  spec.user_id = "csi";
  spec.keyfile = "/run/keys/csi";
  RadosConfig c = RadosConfigForImage(spec, 7);
  EXPECT_EQ(c.monitors, spec.monitors);
  EXPECT_EQ(c.ceph_conf, spec.ceph_conf);
  EXPECT_EQ(c.user_id, "csi");
  EXPECT_EQ(c.keyfile, "/run/keys/csi");
  EXPECT_EQ(c.timeout_s, 7);
}

}  // namespace
}  // namespace nbdk
