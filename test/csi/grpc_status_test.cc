// The one translation of Status to grpc::Status (csi/grpc_status.h): the
// CSI code, and a message bounded and escaped whatever a lower layer wrote.
#include "csi/grpc_status.h"

#include <gtest/gtest.h>

#include "base/quote_field.h"

namespace nbdk {
namespace {

TEST(GrpcStatusTest, CodesAreTheSpecs) {
  EXPECT_TRUE(ToGrpcStatus(Status::Ok()).ok());
  EXPECT_EQ(ToGrpcStatus(Status::InvalidArgument("x")).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(ToGrpcStatus(Status::NotFound("x")).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(ToGrpcStatus(Status::IoError("x")).error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(ToGrpcStatus(Status::InvalidArgument("volume_id: missing")).error_message(), "volume_id: missing");
}

TEST(GrpcStatusTest, AnyMessageIsEscapedAndCapped) {
  // A lower layer that pasted 70,000 raw bytes, a newline and an escape.
  std::string raw = "stage: '" + std::string(70000, 'a') + "\n\x1b[2J'";
  grpc::Status g = ToGrpcStatus(Status::FailedPrecondition(raw));
  EXPECT_EQ(g.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_LE(g.error_message().size(), kMaxMessageBytes);
  EXPECT_TRUE(g.error_message().starts_with("stage: 'aaa")) << g.error_message().substr(0, 40);
  EXPECT_TRUE(g.error_message().ends_with("… (message of 70014 bytes cut)")) << g.error_message();
  EXPECT_EQ(ToGrpcStatus(Status::Internal("a\nb\x1b")).error_message(), "a\\nb\\x1b");
}

}  // namespace
}  // namespace nbdk
