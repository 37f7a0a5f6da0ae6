// The daemon's config file (daemon/config.h ApplyConfigJson): all or
// nothing, so a refused file leaves the settings as they were.
#include "daemon/config.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nbdk::Config config;
  if (!nbdk::ApplyConfigJson(nbdk::fuzz::Text(data, size), &config).ok()) {
    nbdk::Config defaults;
    NBDK_FUZZ_CHECK(config.csi_endpoint == defaults.csi_endpoint && config.state_dir == defaults.state_dir &&
                    config.io_timeout_ms == defaults.io_timeout_ms);
  }
  return 0;
}
