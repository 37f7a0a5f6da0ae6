#include "netlink/nbd_device.h"

#include <charconv>

namespace nbdk {
namespace {

constexpr std::string_view kPrefix = "/dev/nbd";

}  // namespace

std::string NbdDevicePath(int index) { return std::string(kPrefix) + std::to_string(index); }

Result<int> NbdDeviceIndex(std::string_view device) {
  if (device.substr(0, kPrefix.size()) != kPrefix || device.size() == kPrefix.size() ||
      device.size() > kPrefix.size() + 6) {
    return Status::InvalidArgument("device '" + std::string(device) + "': not /dev/nbdN");
  }
  int index = 0;
  auto digits = device.substr(kPrefix.size());
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) {
    return Status::InvalidArgument("device '" + std::string(device) + "': not /dev/nbdN");
  }
  return index;
}

}  // namespace nbdk
