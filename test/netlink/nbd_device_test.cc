#include "netlink/nbd_device.h"

#include <gtest/gtest.h>

namespace nbdk {
namespace {

TEST(NbdDeviceTest, NamesAndPaths) {
  EXPECT_EQ(NbdKernelName(7), "nbd7");
  EXPECT_EQ(NbdDevicePath(7), "/dev/nbd7");
  EXPECT_EQ(*NbdDeviceIndex(NbdDevicePath(123456)), 123456);
  EXPECT_EQ(*NbdKernelNameIndex(NbdKernelName(0)), 0);
}

TEST(NbdDeviceTest, RefusesAnythingElse) {
  for (const char* device : {"/dev/nbd", "/dev/nbd7p1", "/dev/nbdx", "/dev/sda1", "/dev/nbd1234567", "/dev/nbd-1",
                             "/dev/nbd+1", "nbd7", "/dev//nbd7", ""}) {
    Result<int> index = NbdDeviceIndex(device);
    ASSERT_FALSE(index.ok()) << device;
    EXPECT_EQ(index.status().message(), "device '" + std::string(device) + "': not /dev/nbdN");
  }
  for (const char* name : {"nbd", "nbd7p1", "nbdx", "sda", "nbd1234567", "nbd-1", "/dev/nbd7", "loop0"}) {
    EXPECT_EQ(NbdKernelNameIndex(name).status().code(), Code::kInvalidArgument) << name;
  }
}

}  // namespace
}  // namespace nbdk
