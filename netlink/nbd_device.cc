#include "netlink/nbd_device.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace nbdk {
namespace {

constexpr std::string_view kDevDir = "/dev/";
constexpr std::string_view kName = "nbd";
constexpr size_t kMaxDigits = 6;

std::optional<int> IndexOf(std::string_view name) {
  if (!name.starts_with(kName)) return std::nullopt;
  std::string_view digits = name.substr(kName.size());
  if (digits.empty() || digits.size() > kMaxDigits ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  int index = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), index);
  return index;
}

}  // namespace

std::string NbdKernelName(int index) { return std::string(kName) + std::to_string(index); }

std::string NbdDevicePath(int index) { return std::string(kDevDir) + NbdKernelName(index); }

Result<int> NbdKernelNameIndex(std::string_view name) {
  if (auto index = IndexOf(name)) return *index;
  return Status::InvalidArgument("'" + std::string(name) + "': not nbdN");
}

Result<int> NbdDeviceIndex(std::string_view device) {
  std::optional<int> index;
  if (device.starts_with(kDevDir)) index = IndexOf(device.substr(kDevDir.size()));
  if (!index) return Status::InvalidArgument("device '" + std::string(device) + "': not /dev/nbdN");
  return *index;
}

}  // namespace nbdk
