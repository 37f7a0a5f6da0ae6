// The metadata KMS's wrapped key, as stored in the image metadata
// (encryption/key_wrap.h): a key that parses has a 12-byte nonce and room
// for its tag, and encodes to text that parses to the same key. Only the
// parser: scrypt would make each run take a tenth of a second.
#include "encryption/key_wrap.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto key = nbdk::ParseWrappedKey(nbdk::fuzz::Text(data, size));
  if (!key.ok()) {
    NBDK_FUZZ_CHECK(key.status().code() == nbdk::Code::kCorruption);
    NBDK_FUZZ_CHECK(nbdk::fuzz::WithinErrorRule(key.status()));
    return 0;
  }
  NBDK_FUZZ_CHECK(key->nonce.size() == nbdk::kWrapNonceBytes && key->sealed.size() >= nbdk::kWrapTagBytes);
  auto again = nbdk::ParseWrappedKey(nbdk::EncodeWrappedKey(*key));
  NBDK_FUZZ_CHECK(again.ok() && *again == *key);
  return 0;
}
