// The one place where nbdkeeper's Status becomes a gRPC status. The code is
// the one the CSI spec asks for. The message (which never contains secrets)
// goes through BoundMessage (base/quote_field.h): escaped and at most
// kMaxMessageBytes, whatever a lower layer wrote. A status message travels in
// the call's trailing metadata; one larger than the client's metadata limit
// (8 KiB in gRPC's default) hangs the client's connection and every later
// call on it.
#pragma once

#include <grpcpp/support/status.h>

#include "base/status.h"

namespace nbdk {

grpc::Status ToGrpcStatus(const Status& status);

}  // namespace nbdk
