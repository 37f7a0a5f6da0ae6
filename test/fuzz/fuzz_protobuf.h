// For the targets whose input is a protobuf message in wire format.
#pragma once

#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>

namespace nbdk::fuzz {

// Parses the input as a `Request` and, when it is one, hands it to `parse`.
template <typename Request, typename Parse>
void ParseAs(const uint8_t* data, size_t size, Parse parse) {
  Request request;
  if (request.ParseFromArray(data, static_cast<int>(size))) (void)parse(request);
}

}  // namespace nbdk::fuzz

// Protobuf logs every string field that is not UTF-8; at thousands of inputs
// a second that drowns the fuzzer's own output and slows it down.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}
