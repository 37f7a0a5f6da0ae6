// Journal record files (journal/node_record_frame.h): a file that decodes is
// exactly the frame of its payload, and any payload framed decodes back.
#include "journal/node_record_frame.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view file = nbdk::fuzz::Text(data, size);
  auto payload = nbdk::DecodeRecordFrame(file);
  if (payload.ok()) NBDK_FUZZ_CHECK(nbdk::EncodeRecordFrame(*payload) == file);
  if (size <= nbdk::kMaxRecordPayload) {
    std::string framed = nbdk::EncodeRecordFrame(file);
    auto decoded = nbdk::DecodeRecordFrame(framed);
    NBDK_FUZZ_CHECK(decoded.ok() && *decoded == file);
  }
  return 0;
}
