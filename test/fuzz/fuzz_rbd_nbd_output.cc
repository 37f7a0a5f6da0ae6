// rbd-nbd's output line naming the device it connected
// (supervisor/rbd_nbd_argv.h ParseDeviceLine): a device it finds has an
// index.
#include "supervisor/rbd_nbd_argv.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view line = nbdk::fuzz::Text(data, size);
  (void)nbdk::NbdDeviceIndex(line);
  auto device = nbdk::ParseDeviceLine(line);
  if (device) NBDK_FUZZ_CHECK(nbdk::NbdDeviceIndex(*device).ok());
  return 0;
}
