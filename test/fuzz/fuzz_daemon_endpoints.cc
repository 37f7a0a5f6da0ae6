// The daemon's endpoint settings (daemon/config.h ParseUnixEndpoint and
// ParseHostPort).
#include "daemon/config.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = nbdk::fuzz::Text(data, size);
  auto path = nbdk::ParseUnixEndpoint(text);
  if (path.ok()) NBDK_FUZZ_CHECK(path->starts_with("/") && path->size() < 108);
  auto host_port = nbdk::ParseHostPort(text);
  if (host_port.ok()) NBDK_FUZZ_CHECK(!host_port->host.empty());
  return 0;
}
