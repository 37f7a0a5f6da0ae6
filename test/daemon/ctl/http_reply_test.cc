// nbdkeeperctl's reading of the daemon's HTTP replies (daemon/ctl/http_reply.h).
#include "daemon/ctl/http_reply.h"

#include <gtest/gtest.h>

#include <string>

namespace nbdk::ctl {
namespace {

TEST(HttpReplyTest, ContentLengthBody) {
  auto a = ParseHttpReply("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->status, 200);
  EXPECT_EQ(a->body, "{\"a\":1}");
}

TEST(HttpReplyTest, ChunkedBodyIsJoined) {
  auto a = ParseHttpReply("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->body, "abcdefg");
}

TEST(HttpReplyTest, BodyUpToTheClose) {
  auto a = ParseHttpReply("HTTP/1.0 200 OK\r\n\r\nok\n");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->body, "ok\n");
}

TEST(HttpReplyTest, NonOkStatusIsAnAnswerNotAnError) {
  auto a = ParseHttpReply("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 9\r\n\r\nnot ready");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->status, 503);
  EXPECT_EQ(a->body, "not ready");
}

TEST(HttpReplyTest, BytesAfterTheResponseAreIgnored) {
  auto a = ParseHttpReply("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokGARBAGE");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->body, "ok");
}

void ExpectUnavailable(std::string_view reply, std::string_view says) {
  auto a = ParseHttpReply(reply);
  ASSERT_FALSE(a.ok()) << "accepted: " << reply;
  EXPECT_EQ(a.status().code(), Code::kUnavailable);
  EXPECT_NE(a.status().message().find(says), std::string::npos) << a.status().ToString();
  EXPECT_EQ(a.status().message().find('\n'), std::string::npos) << "one line: " << a.status().ToString();
}

TEST(HttpReplyTest, WhatIsNotOneCompleteResponseIsNamed) {
  ExpectUnavailable("", "no HTTP reply");
  ExpectUnavailable("\r\n\r\n", "no HTTP reply");
  ExpectUnavailable("SSH-2.0-OpenSSH_9.2\r\n", "malformed HTTP reply");
  ExpectUnavailable("HTTP/1.1 abc OK\r\n\r\n", "malformed HTTP reply");
  ExpectUnavailable("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "malformed HTTP reply");
  ExpectUnavailable("HTTP/1.1 200 OK\r\nContent-Le", "malformed HTTP reply");
  ExpectUnavailable("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "malformed HTTP reply");
}

}  // namespace
}  // namespace nbdk::ctl
