// The error rule itself (base/quote_field.h) on any bytes: a quote is
// bounded and already passes the last guard unchanged (escaped, whole UTF-8),
// and the last guard bounds any message and leaves its own output as is.
#include "base/quote_field.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = nbdk::fuzz::Text(data, size);
  std::string quoted = nbdk::QuoteField(text);
  NBDK_FUZZ_CHECK(quoted.size() <= nbdk::kMaxQuotedBytes + 40);
  NBDK_FUZZ_CHECK(nbdk::BoundMessage(quoted) == quoted);
  // A small cap makes the cut happen at every length the fuzzer tries.
  for (size_t cap : {size_t{64}, nbdk::kMaxMessageBytes}) {
    std::string bounded = nbdk::BoundMessage(text, cap);
    NBDK_FUZZ_CHECK(bounded.size() <= cap);
    NBDK_FUZZ_CHECK(nbdk::BoundMessage(bounded, cap) == bounded);
  }
  return 0;
}
