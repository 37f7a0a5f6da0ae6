// blkid's export output (csi/node/filesystem.h ParseBlkidExport): whatever it
// says, a parse either fails or names something, and only an empty answer
// could ever read as blank - never output that lists a key.
#include "csi/node/filesystem.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = nbdk::fuzz::Text(data, size);
  auto sig = nbdk::ParseBlkidExport(text);
  if (!sig.ok()) return 0;
  NBDK_FUZZ_CHECK(!sig->blank());
  return 0;
}
