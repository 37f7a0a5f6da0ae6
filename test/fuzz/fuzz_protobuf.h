// For the targets whose input is a protobuf message in wire format.
#pragma once

#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>

#include "test/fuzz/fuzz_input.h"

namespace nbdk::fuzz {

// Parses the input as a `Request` and, when it is one, hands it to `parse`;
// an error it answers keeps to the error rule.
template <typename Request, typename Parse>
void ParseAs(const uint8_t* data, size_t size, Parse parse) {
  Request request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return;
  auto parsed = parse(request);
  NBDK_FUZZ_CHECK(WithinErrorRule(parsed.status()));
}

}  // namespace nbdk::fuzz

// Protobuf logs every string field that is not UTF-8; at thousands of inputs
// a second that drowns the fuzzer's own output and slows it down.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}
