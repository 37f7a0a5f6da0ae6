// A StorageClass's mapOptions as the node reads them: the nbd section
// (csi/map_options.h), then the allow-list (supervisor/map_options.h). The
// argv tokens it makes pass the supervisor's re-check, and parse to
// themselves again.
#include "csi/map_options.h"
#include "supervisor/map_options.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto section = nbdk::NbdOptionSection(nbdk::fuzz::Text(data, size));
  if (!section.ok()) return 0;
  auto tokens = nbdk::ParseMapOptions(*section);
  if (!tokens.ok()) return 0;
  NBDK_FUZZ_CHECK(nbdk::ValidateMapOptions(*tokens).ok());
  std::string csv;
  for (const std::string& token : *tokens) csv += (csv.empty() ? "" : ",") + token;
  auto again = nbdk::ParseMapOptions(csv);
  NBDK_FUZZ_CHECK(again.ok() && *again == *tokens);
  return 0;
}
