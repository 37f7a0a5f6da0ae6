// A volume context's mkfsOptions as the node reads them (csi/mkfs_options.h)
// for ext4 or xfs (the first byte picks). What it accepts is space-free
// argv elements that read back as themselves; a refusal keeps to the error
// rule (base/quote_field.h).
#include <string>

#include "csi/mkfs_options.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string fs = (data[0] & 1) ? "xfs" : "ext4";
  const std::string text(nbdk::fuzz::Text(data + 1, size - 1));
  auto options = nbdk::MkfsOptions(fs, text);
  NBDK_FUZZ_CHECK(nbdk::fuzz::WithinErrorRule(options.status()));
  if (!options.ok() || text.empty()) return 0;
  std::string joined;
  for (const std::string& option : *options) {
    NBDK_FUZZ_CHECK(!option.empty() && option.find(' ') == std::string::npos);
    joined += (joined.empty() ? "" : " ") + option;
  }
  auto again = nbdk::MkfsOptions(fs, joined);
  NBDK_FUZZ_CHECK(again.ok() && *again == *options);
  return 0;
}
