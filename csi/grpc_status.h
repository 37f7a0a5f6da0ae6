// The one place where nbdkeeper's Status becomes a gRPC status. The code is
// the one the CSI spec asks for; messages pass through unchanged (they never
// contain secrets).
#pragma once

#include <grpcpp/support/status.h>

#include "daemon/base/status.h"

namespace nbdk {

grpc::Status ToGrpcStatus(const Status& status);

}  // namespace nbdk
