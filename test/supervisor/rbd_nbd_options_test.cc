#include "supervisor/rbd_nbd_options.h"

#include <gtest/gtest.h>

namespace nbdk {
namespace {

using Args = std::vector<std::string>;

TEST(RbdNbdOptionsTest, AllowedOptionsBecomeOneCanonicalTokenEach) {
  EXPECT_EQ(*ParseRbdNbdOptions("try-netlink, exclusive ,, --notrace"),
            (Args{"--try-netlink", "--exclusive", "--notrace"}));
  EXPECT_EQ(*ParseRbdNbdOptions("io_timeout=0,timeout=00"), (Args{"--io-timeout=0", "--timeout=00"}));
  EXPECT_EQ(*ParseRbdNbdOptions("rbd-read-from-replica-policy=localize,crush_location=host=a|rack=b"),
            (Args{"--rbd_read_from_replica_policy=localize", "--crush_location=host=a;rack=b"}));
  EXPECT_EQ(*ParseRbdNbdOptions(""), Args{});
}

// Ceph's config parser splits a crush_location into pairs at ';', ',' and
// blanks only: "host=a|rack=b" would be one bad pair and librbd would read
// from no location. Every spelling becomes the one Ceph reads.
TEST(RbdNbdOptionsTest, ACrushLocationBecomesCephsPairs) {
  EXPECT_EQ(*ParseRbdNbdOptions("crush_location=host:a|zone:z-1.b"), (Args{"--crush_location=host=a;zone=z-1.b"}));
  EXPECT_EQ(*ParseRbdNbdOptions("crush-location=host=a"), (Args{"--crush_location=host=a"}));
  EXPECT_TRUE(ValidateRbdNbdOptions({"--crush_location=host=a;rack=b"}).ok());
  for (const char* bad :
       {"crush_location=host", "crush_location=host=a|", "crush_location=|host=a", "crush_location=host=a|rack",
        "crush_location=host=-a", "crush_location==a", "crush_location=host=a=b", "crush_location=host=a,b"}) {
    EXPECT_FALSE(ParseRbdNbdOptions(bad).ok()) << bad;
  }
}

// Ceph reads '-' and '_' alike: every spelling of a refused option is refused.
TEST(RbdNbdOptionsTest, NonZeroTimeoutsAreRefusedInEverySpellingAndSayWhy) {
  for (const char* bad : {"io-timeout=30", "io_timeout=30", "--io_timeout=1", "timeout=5", "io-timeout=x"}) {
    auto r = ParseRbdNbdOptions(std::string("exclusive,") + bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("EIO"), std::string::npos) << r.status().message();
  }
  EXPECT_FALSE(ParseRbdNbdOptions("io-timeout").ok()) << "a timeout needs its value";
}

TEST(RbdNbdOptionsTest, PathsProgramsAndWhatNbdkeeperSetsAreRefused) {
  for (const char* bad : {"admin-socket=/etc/passwd",
                          "admin_socket=/x",
                          "log-file=/etc/shadow",
                          "log_file=/x",
                          "quiesce-hook=/bin/sh",
                          "quiesce_hook=/x",
                          "keyring=/x",
                          "reattach-timeout=1",
                          "reattach_timeout=600",
                          "device=/dev/nbd3",
                          "cookie=x",
                          "id=admin",
                          "keyfile=/k",
                          "mon_host=1.2.3.4",
                          "conf=/etc/ceph/x.conf",
                          "read-only",
                          "rbd_cache=true",
                          "rbd-cache=true",
                          "no-rbd-cache",
                          "rbd_cache_size=1",
                          "rados_osd_op_timeout=5",
                          "encryption-passphrase-file=/x",
                          "snap-id=4"}) {
    auto r = ParseRbdNbdOptions(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << bad;
  }
  EXPECT_NE(ParseRbdNbdOptions("reattach-timeout=1").status().message().find("reattach_timeout_s"), std::string::npos);
  EXPECT_NE(ParseRbdNbdOptions("rbd-cache=false").status().message().find("cache"), std::string::npos);
}

TEST(RbdNbdOptionsTest, SecretsAreNeverEchoed) {
  auto r = ParseRbdNbdOptions("key=AQBsecretsecret");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().find("AQB"), std::string::npos) << r.status().message();
}

TEST(RbdNbdOptionsTest, ValuesFollowTheirRule) {
  for (const char* bad : {"exclusive=1", "max_part=-1", "max_part=1e3", "rbd_read_from_replica_policy=any",
                          "crush_location=-x", "crush_location=a b", "ms_client_mode=plain", "nbds_max="}) {
    EXPECT_FALSE(ParseRbdNbdOptions(bad).ok()) << bad;
  }
  EXPECT_TRUE(ParseRbdNbdOptions("max_part=15,nbds_max=1024,ms_client_mode=prefer-secure").ok());
}

TEST(RbdNbdOptionsTest, JournaledTokensAreCheckedAgainstTheSameList) {
  EXPECT_TRUE(ValidateRbdNbdOptions({"--try-netlink", "--io-timeout=0", "--io_timeout=0"}).ok());
  EXPECT_FALSE(ValidateRbdNbdOptions({"--io-timeout", "5"}).ok()) << "two-token form: '5' is no option";
  EXPECT_FALSE(ValidateRbdNbdOptions({"--quiesce-hook=/bin/sh"}).ok());
  EXPECT_FALSE(ValidateRbdNbdOptions({"exclusive"}).ok());
  EXPECT_FALSE(ValidateRbdNbdOptions({"--device=/dev/nbd1"}).ok());
}

TEST(RbdNbdOptionsTest, ASnapshotRefusesExclusiveInEverySpellingAndKeepsTheRest) {
  EXPECT_TRUE(CheckSnapshotMapOptions({"--try-netlink", "--notrace", "--io-timeout=0"}).ok());
  EXPECT_TRUE(CheckSnapshotMapOptions({}).ok());
  for (const char* token : {"--exclusive", "exclusive"}) {
    Status s = CheckSnapshotMapOptions({"--try-netlink", token});
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << token;
    EXPECT_NE(s.message().find("exclusive"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("snapshot"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace nbdk
