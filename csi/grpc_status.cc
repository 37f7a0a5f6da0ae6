#include "csi/grpc_status.h"

#include "base/quote_field.h"

namespace nbdk {

grpc::Status ToGrpcStatus(const Status& status) {
  grpc::StatusCode code = grpc::StatusCode::INTERNAL;
  switch (status.code()) {
    case Code::kOk:
      return grpc::Status::OK;
    case Code::kInvalidArgument:
      code = grpc::StatusCode::INVALID_ARGUMENT;
      break;
    case Code::kNotFound:
      code = grpc::StatusCode::NOT_FOUND;
      break;
    case Code::kAlreadyExists:
      code = grpc::StatusCode::ALREADY_EXISTS;
      break;
    case Code::kFailedPrecondition:
      code = grpc::StatusCode::FAILED_PRECONDITION;
      break;
    case Code::kAborted:
      code = grpc::StatusCode::ABORTED;
      break;
    case Code::kOutOfRange:
      code = grpc::StatusCode::OUT_OF_RANGE;
      break;
    case Code::kUnavailable:
      code = grpc::StatusCode::UNAVAILABLE;
      break;
    case Code::kDeadlineExceeded:
      code = grpc::StatusCode::DEADLINE_EXCEEDED;
      break;
    case Code::kResourceExhausted:
      code = grpc::StatusCode::RESOURCE_EXHAUSTED;
      break;
    case Code::kUnimplemented:
      code = grpc::StatusCode::UNIMPLEMENTED;
      break;
    // A failed system call, unreadable stored data and broken invariants are
    // all the plugin's own failure: INTERNAL is the CSI answer for them.
    case Code::kIoError:
    case Code::kCorruption:
    case Code::kInternal:
      code = grpc::StatusCode::INTERNAL;
      break;
  }
  return grpc::Status(code, BoundMessage(status.message()));
}

}  // namespace nbdk
