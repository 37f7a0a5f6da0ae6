// image-meta.json stash files (csi/node/stash.h), ours or ceph-csi's: a stash
// that decodes encodes to one that decodes the same.
#include "csi/node/stash.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto stash = nbdk::DecodeStash(nbdk::fuzz::Text(data, size), "image-meta.json");
  if (!stash.ok()) return 0;
  auto again = nbdk::DecodeStash(nbdk::EncodeStash(*stash), "image-meta.json");
  NBDK_FUZZ_CHECK(again.ok() && *again == *stash);
  return 0;
}
