// The one owner of the nbd device naming rule: /dev/nbd<index>.
#pragma once

#include <string>
#include <string_view>

#include "daemon/base/status.h"

namespace nbdk {

// 7 -> "/dev/nbd7".
std::string NbdDevicePath(int index);

// "/dev/nbd7" -> 7; InvalidArgument for anything else (a partition such as
// "/dev/nbd7p1", another device, more than 6 digits).
Result<int> NbdDeviceIndex(std::string_view device);

}  // namespace nbdk
