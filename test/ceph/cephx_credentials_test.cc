#include "ceph/cephx_credentials.h"

#include <gtest/gtest.h>

#include <string>

namespace nbdk {
namespace {

constexpr char kKey[] = "AQBz1ZlhAAAAABAAqXR2Y1aU1C3lH7OGvXu+Xw==";

void ExpectInvalid(const Status& s, const std::string& says) {
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.ToString();
  EXPECT_EQ(s.message().rfind("field: ", 0), 0u) << s.ToString();
  EXPECT_NE(s.message().find(says), std::string::npos) << s.ToString();
}

TEST(CephxUserIdTest, CephCsisUsersPass) {
  for (const char* id : {"admin", "csi-rbd-node", "csi_rbd.provisioner", "a"}) {
    EXPECT_TRUE(CheckCephxUserId("field", id).ok()) << id;
  }
  EXPECT_TRUE(CheckCephxUserId("field", std::string(kMaxCephxUserIdBytes, 'u')).ok());
}

TEST(CephxUserIdTest, EachBrokenRuleIsNamed) {
  ExpectInvalid(CheckCephxUserId("field", ""), "missing");
  ExpectInvalid(CheckCephxUserId("field", std::string(kMaxCephxUserIdBytes + 1, 'u')), "longer than 128 bytes");
  for (const char* id : {"a b", "a\tb", "csi\n", "a\x7f"}) {
    ExpectInvalid(CheckCephxUserId("field", id), "whitespace or a control character");
  }
  ExpectInvalid(CheckCephxUserId("field", std::string("a\0b", 3)), "whitespace or a control character");
  ExpectInvalid(CheckCephxUserId("field", "-x"), "'-x' starts with '-'");
  ExpectInvalid(CheckCephxUserId("field", "client.admin"), "'client.admin' names the user with the 'client.' prefix");
}

TEST(CephxKeyTest, SurroundingWhitespaceIsNotPartOfTheKey) {
  for (const std::string& text : {std::string(kKey), std::string(kKey) + "\n", "  " + std::string(kKey) + "\r\n"}) {
    auto key = ParseCephxKey("field", text);
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    EXPECT_EQ(*key, kKey);
  }
}

TEST(CephxKeyTest, EveryBase64KeyPassesWhateverItsLength) {
  // What the request parsers accepted before this rule had one owner.
  for (const char* key :
       {"AQBsecretKEYvalue0123456789abcdefghij==", "AQBjb2ZmZWVjb2ZmZWVjb2ZmZWVjb2ZmZWVjb2ZmZWU9PQ==", "a", "+/=="}) {
    EXPECT_TRUE(ParseCephxKey("field", key).ok()) << key;
  }
}

TEST(CephxKeyTest, ABrokenKeyIsNamedButNeverShown) {
  ExpectInvalid(ParseCephxKey("field", "").status(), "missing");
  ExpectInvalid(ParseCephxKey("field", " \n\t").status(), "missing");
  const std::string inside = std::string(kKey).insert(20, "\n");
  for (const std::string& key : {inside, std::string(kKey) + " x", std::string(kKey) + "'", std::string("AQB;rm -rf /"),
                                 std::string(kKey) + "\x1b[2J", std::string(kKey) + "\xc3\xa9"}) {
    Status s = ParseCephxKey("field", key).status();
    ExpectInvalid(s, "not a base64 cephx key");
    EXPECT_EQ(s.message().find(kKey, 0, 12), std::string::npos) << "the key leaked: " << s.message();
  }
}

}  // namespace
}  // namespace nbdk
