// Journal record payloads (journal/volume_record.h): a record that decodes
// encodes to one that decodes the same.
#include "journal/volume_record.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto record = nbdk::DecodeVolumeRecord(nbdk::fuzz::Text(data, size));
  if (!record.ok()) return 0;
  auto again = nbdk::DecodeVolumeRecord(nbdk::EncodeVolumeRecord(*record));
  NBDK_FUZZ_CHECK(again.ok() && *again == *record);
  return 0;
}
