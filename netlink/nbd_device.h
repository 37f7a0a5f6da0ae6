// The one owner of the nbd device naming rule: the kernel names device
// <index> "nbd<index>", which is its node under /dev and its directory under
// /sys/block.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace nbdk {

// 7 -> "nbd7": the kernel's name (/sys/block/nbd7, devtmpfs's "/nbd7").
std::string NbdKernelName(int index);

// 7 -> "/dev/nbd7".
std::string NbdDevicePath(int index);

// "nbd7" -> 7; InvalidArgument for anything else (a partition such as
// "nbd7p1", another device, a sign, more than 6 digits).
Result<int> NbdKernelNameIndex(std::string_view name);

// "/dev/nbd7" -> 7; InvalidArgument for anything else (a partition such as
// "/dev/nbd7p1", another device, a sign, more than 6 digits).
Result<int> NbdDeviceIndex(std::string_view device);

}  // namespace nbdk
