// CSI volume IDs (journal/volume_id.h): the volume ID rule takes any input
// and answers within the error rule (base/quote_field.h), and a
// decoded ID encodes back to one that decodes the same and fits the CSI
// limit.
#include "journal/volume_id.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = nbdk::fuzz::Text(data, size);
  NBDK_FUZZ_CHECK(nbdk::fuzz::WithinErrorRule(nbdk::ValidateVolumeId(text)));
  auto id = nbdk::DecodeVolumeId(text);
  NBDK_FUZZ_CHECK(nbdk::fuzz::WithinErrorRule(id.status()));
  if (!id.ok()) return 0;
  std::string encoded = nbdk::EncodeVolumeId(*id);
  NBDK_FUZZ_CHECK(encoded.size() <= nbdk::kMaxVolumeIdLength);
  auto again = nbdk::DecodeVolumeId(encoded);
  NBDK_FUZZ_CHECK(again.ok() && *again == *id);
  return 0;
}
