// Shared by the fuzz targets: the input as text or as a list, and the checks
// of invariants.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "base/quote_field.h"
#include "base/status.h"

// A broken invariant aborts: libFuzzer reports it as a crash and keeps the
// input that broke it.
#define NBDK_FUZZ_CHECK(condition)                                                           \
  do {                                                                                       \
    if (!(condition)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)

namespace nbdk::fuzz {

// An error names outside input only through QuoteField, so its message is
// short and inert already: the last guard (BoundMessage) leaves it as is.
inline bool WithinErrorRule(const Status& status) { return BoundMessage(status.message()) == status.message(); }

inline std::string_view Text(const uint8_t* data, size_t size) { return {reinterpret_cast<const char*>(data), size}; }

// "a\nb" -> {"a", "b"}: lists such as argv or mount flags, one per piece.
inline std::vector<std::string> Split(std::string_view text, char separator) {
  std::vector<std::string> pieces;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    pieces.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos) return pieces;
    start = end + 1;
  }
}

}  // namespace nbdk::fuzz
