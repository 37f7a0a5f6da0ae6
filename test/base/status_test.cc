#include "base/status.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "base/log.h"

namespace nbdk {
namespace {

TEST(StatusTest, OkByDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, CarriesCodeAndMessage) {
  Status s = Status::InvalidArgument("volume_id: missing");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.ToString(), "InvalidArgument: volume_id: missing");
  EXPECT_EQ(s.WithContext("stage").message(), "stage: volume_id: missing");
}

TEST(StatusTest, FromErrnoPicksCode) {
  EXPECT_EQ(Status::FromErrno(ENOENT, "open x").code(), Code::kNotFound);
  EXPECT_EQ(Status::FromErrno(EIO, "read").code(), Code::kIoError);
  EXPECT_EQ(Status::FromErrno(ENOSPC, "write").code(), Code::kResourceExhausted);
  // A system call's EINVAL or EBUSY is not the caller's input or a retry hint.
  EXPECT_EQ(Status::FromErrno(EINVAL, "ioctl").code(), Code::kIoError);
  EXPECT_EQ(Status::FromErrno(EBUSY, "umount").code(), Code::kIoError);
  EXPECT_NE(Status::FromErrno(ENOENT, "open x").message().find("open x: "), std::string::npos);
}

TEST(ResultTest, HoldsValueOrStatus) {
  Result<int> r = 7;
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 7);
  Result<int> e = Status::NotFound("nope");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), Code::kNotFound);
}

TEST(LogTest, QuotesValuesThatNeedIt) {
  std::string line = FormatLogLine(LogLevel::kWarn, "x", {{"a", "plain"}, {"b", "two words"}, {"n", 3}});
  EXPECT_EQ(line, "level=warn event=x a=plain b=\"two words\" n=3");
  EXPECT_EQ(FormatLogLine(LogLevel::kInfo, "e", {{"q", "say \"hi\"\n"}}), "level=info event=e q=\"say \\\"hi\\\"\\n\"");
}

}  // namespace
}  // namespace nbdk
