// Supervisor::CheckDevice, DeviceBytes and GrowDevice: the device of a
// volume the supervisor does not map, or that no longer carries the
// volume's cookie, is never touched. (Growth itself needs a kernel
// nbd device: test/csi/controller_vm_test's CreateStageExpandDeleteLifecycle
// runs it in the VM.)
#include <signal.h>

#include <fstream>
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

// Another volume's map took the index (after a release, or a daemon
// restart): nothing is published on it, grown, sized, or unmapped.
TEST_F(SupervisorTest, ADeviceCarryingAnotherCookieIsNeitherPublishedNorGrownNorUnmapped) {
  config_.unmap_exit_wait_ms = 200;
  Behave("img1.map", "device=/dev/nbd1");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  std::optional<Result<std::string>> ours, other;
  sup().CheckDevice("vol1", [&](Result<std::string> r) { ours = std::move(r); });
  ASSERT_TRUE(RunUntil([&] { return ours.has_value(); }));
  ASSERT_TRUE(ours->ok()) << ours->status().ToString();
  EXPECT_EQ(**ours, "/dev/nbd1") << "the fake connected it with the volume's cookie";

  std::ofstream(dir_ + "/sys/block/nbd1/backend") << "vol-other\n";
  std::optional<Result<uint64_t>> size, grown;
  sup().CheckDevice("vol1", [&](Result<std::string> r) { other = std::move(r); });
  sup().DeviceBytes("vol1", [&](Result<uint64_t> r) { size = std::move(r); });
  sup().GrowDevice("vol1", 1 << 20, [&](Result<uint64_t> r) { grown = std::move(r); });
  ASSERT_TRUE(RunUntil([&] { return other.has_value() && size.has_value() && grown.has_value(); }));
  for (const Status& s : {other->status(), size->status(), grown->status()}) {
    EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s.ToString();
    EXPECT_NE(s.message().find("carries cookie vol-other, not vol1"), std::string::npos) << s.ToString();
  }
  // Its server dead and not re-attached, the unstage's unmap finds the
  // device another volume's: it leaves it alone.
  Behave("img1.attach", "mode=exit exit_code=1");
  kill(Snap("vol1").pid, SIGKILL);
  ASSERT_TRUE(RunUntil([&] { return CountArgv(" attach ") >= 1; }));
  EXPECT_TRUE(UnmapAndWait("vol1").ok());
  EXPECT_EQ(CountArgv(" unmap "), 0) << "another volume's device is never disconnected";
  UnmapAllAndShutdown();
}

}  // namespace
}  // namespace nbdk
