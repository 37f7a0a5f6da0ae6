#include "daemon/http_request.h"

#include <gtest/gtest.h>

namespace nbdk {
namespace {

using State = HttpRequestReader::State;

TEST(HttpRequestReader, ReadsOneRequest) {
  HttpRequestReader reader;
  EXPECT_EQ(reader.Feed("GET /healthz?verbose=1 HTTP/1.1\r\nHost: x\r\n\r\n"), State::kComplete);
  EXPECT_EQ(reader.method(), HTTP_GET);
  EXPECT_EQ(reader.url(), "/healthz?verbose=1");
}

// A socket read may return no bytes without the stream ending; http_parser
// alone would take that for the end and call a half-read request malformed.
TEST(HttpRequestReader, PiecesAndEmptyReadsMakeOneRequest) {
  HttpRequestReader reader;
  EXPECT_EQ(reader.Feed("HEAD /rea"), State::kIncomplete);
  EXPECT_EQ(reader.Feed(""), State::kIncomplete);
  EXPECT_EQ(reader.Feed("dyz HTTP/1.1\r\n"), State::kIncomplete);
  EXPECT_EQ(reader.Feed(""), State::kIncomplete);
  EXPECT_EQ(reader.Feed("\r\n"), State::kComplete);
  EXPECT_EQ(reader.method(), HTTP_HEAD);
  EXPECT_EQ(reader.url(), "/readyz");
}

TEST(HttpRequestReader, BytesAfterTheRequestAreIgnored) {
  HttpRequestReader reader;
  EXPECT_EQ(reader.Feed("GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n"), State::kComplete);
  EXPECT_EQ(reader.url(), "/a");
  EXPECT_EQ(reader.Feed("garbage"), State::kComplete);
  EXPECT_EQ(reader.url(), "/a");
}

TEST(HttpRequestReader, MalformedStaysMalformed) {
  HttpRequestReader reader;
  EXPECT_EQ(reader.Feed("THIS IS NOT HTTP\r\n\r\n"), State::kMalformed);
  EXPECT_FALSE(reader.error().empty());
  EXPECT_EQ(reader.Feed("GET / HTTP/1.1\r\n\r\n"), State::kMalformed);
}

}  // namespace
}  // namespace nbdk
