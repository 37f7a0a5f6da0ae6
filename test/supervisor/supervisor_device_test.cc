// Supervisor::DeviceBytes and GrowDevice: the device of a volume the
// supervisor does not map is never touched. (Growth itself needs a kernel
// nbd device: test/csi/controller_vm_test's CreateStageExpandDeleteLifecycle
// runs it in the VM.)
#include <optional>

#include "test/supervisor/supervisor_fixture.h"

namespace nbdk {
namespace {

TEST_F(SupervisorTest, DeviceOfAnUnmappedVolumeIsNotFound) {
  std::optional<Result<uint64_t>> size, grown;
  sup().DeviceBytes("vol1", [&](Result<uint64_t> r) { size = std::move(r); });
  sup().GrowDevice("vol1", 1 << 20, [&](Result<uint64_t> r) { grown = std::move(r); });
  ASSERT_TRUE(RunUntil([&] { return size.has_value() && grown.has_value(); }));
  EXPECT_EQ(size->status().code(), Code::kNotFound);
  EXPECT_EQ(grown->status().code(), Code::kNotFound);
  EXPECT_NE(grown->status().message().find("vol1"), std::string::npos) << grown->status().message();
}

}  // namespace
}  // namespace nbdk
