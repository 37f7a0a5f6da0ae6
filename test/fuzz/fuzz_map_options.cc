// A StorageClass's mapOptions as the node reads them (csi/map_options.h
// MapOptionArguments: the nbd section, then the allow-list of
// supervisor/rbd_nbd_options.h). The argv tokens it makes pass the
// supervisor's re-check, and parse to themselves again; a refusal keeps to
// the error rule (base/quote_field.h).
#include "csi/map_options.h"
#include "supervisor/rbd_nbd_options.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto tokens = nbdk::MapOptionArguments(nbdk::fuzz::Text(data, size));
  NBDK_FUZZ_CHECK(nbdk::fuzz::WithinErrorRule(tokens.status()));
  if (!tokens.ok()) return 0;
  NBDK_FUZZ_CHECK(nbdk::ValidateRbdNbdOptions(*tokens).ok());
  std::string csv;
  for (const std::string& token : *tokens) csv += (csv.empty() ? "" : ",") + token;
  auto again = nbdk::ParseRbdNbdOptions(csv);
  NBDK_FUZZ_CHECK(again.ok() && *again == *tokens);
  return 0;
}
