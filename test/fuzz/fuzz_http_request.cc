// Health endpoint requests (daemon/http_request.h): read whole or in two
// pieces, as a socket may deliver them, a request reads the same.
#include "daemon/http_request.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view request = nbdk::fuzz::Text(data + 1, size - 1);
  size_t cut = data[0] % (request.size() + 1);

  nbdk::HttpRequestReader whole;
  whole.Feed(request);
  nbdk::HttpRequestReader pieces;
  if (pieces.Feed(request.substr(0, cut)) == nbdk::HttpRequestReader::State::kIncomplete) {
    pieces.Feed(request.substr(cut));
  }
  NBDK_FUZZ_CHECK(whole.state() == pieces.state());
  if (whole.state() == nbdk::HttpRequestReader::State::kComplete) {
    NBDK_FUZZ_CHECK(whole.url() == pieces.url() && whole.method() == pieces.method());
  }
  return 0;
}
