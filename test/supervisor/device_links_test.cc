// DeviceLinks (supervisor/device_links.h): the stable names placed after a
// map and every re-attach, removed after the unmap, and nothing touched
// that the daemon did not write.
#include "supervisor/device_links.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test/supervisor/supervisor_fixture.h"

namespace nbdk {
namespace {

std::string Target(const std::string& link) {
  std::error_code ec;
  auto t = std::filesystem::read_symlink(link, ec);
  return ec ? std::string() : t.string();
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

class DeviceLinksTest : public SupervisorTest {
 protected:
  std::string Root() const { return dir_ + "/dev-nbdkeeper"; }
};

TEST_F(DeviceLinksTest, PlacedAndRemovedOnlyWhereOwned) {
  const std::string root = Root();
  ASSERT_TRUE(PlaceDeviceLink(root, "rbd/ns/db", "/dev/nbd3").ok());
  EXPECT_EQ(Target(root + "/rbd/ns/db"), "/dev/nbd3");
  ASSERT_TRUE(PlaceDeviceLink(root, "rbd/web@monday", "/dev/nbd4").ok());
  EXPECT_EQ(Target(root + "/rbd/web@monday"), "/dev/nbd4");
  ASSERT_TRUE(PlaceDeviceLink(root, "rbd/ns/db", "/dev/nbd5").ok()) << "a stale link is replaced";
  EXPECT_EQ(Target(root + "/rbd/ns/db"), "/dev/nbd5");

  EXPECT_TRUE(RemoveDeviceLink(root, "rbd/ns/db", "/dev/nbd3").ok());
  EXPECT_EQ(Target(root + "/rbd/ns/db"), "/dev/nbd5") << "another device's link is not ours to remove";
  EXPECT_TRUE(RemoveDeviceLink(root, "rbd/ns/db", "/dev/nbd5").ok());
  EXPECT_FALSE(Exists(root + "/rbd/ns")) << "the emptied namespace directory goes";
  EXPECT_TRUE(Exists(root + "/rbd/web@monday")) << "the pool directory stays for its other link";
  EXPECT_TRUE(RemoveDeviceLink(root, "rbd/web@monday", "/dev/nbd4").ok());
  EXPECT_FALSE(Exists(root)) << "and the root once empty";
  EXPECT_TRUE(RemoveDeviceLink(root, "rbd/gone", "/dev/nbd4").ok()) << "a missing link is OK";

  std::filesystem::create_directories(root + "/rbd");
  std::ofstream(root + "/rbd/file") << "someone's\n";
  EXPECT_EQ(PlaceDeviceLink(root, "rbd/file", "/dev/nbd6").code(), Code::kFailedPrecondition);
  EXPECT_EQ(ReadFile(root + "/rbd/file"), "someone's\n");
  std::filesystem::create_symlink("/tmp", root + "/escape");
  EXPECT_FALSE(PlaceDeviceLink(root, "escape/img", "/dev/nbd7").ok()) << "no link through a symlink";
  EXPECT_FALSE(Exists("/tmp/img") && Target("/tmp/img") == "/dev/nbd7");
}

TEST_F(DeviceLinksTest, KeptFromTheSupervisorsStates) {
  DeviceLinks links(loop_, Root());
  sup().SetStateChanged([&](const std::string& id, const std::string& image, const std::string& device,
                            MappingState state) { links.OnState(id, image, device, state); });
  Behave("img1.map", "device=/dev/nbd3");
  const std::string link = Root() + "/rbd/img1";
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  ASSERT_TRUE(RunUntil([&] { return Target(link) == "/dev/nbd3"; })) << "placed after the map";

  std::filesystem::remove(link);
  ASSERT_EQ(::kill(Snap("vol1").pid, SIGKILL), 0);
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol1", 1); }));
  ASSERT_TRUE(RunUntil([&] { return Target(link) == "/dev/nbd3"; })) << "placed again after the re-attach";

  EXPECT_TRUE(UnmapAndWait("vol1").ok());
  EXPECT_TRUE(RunUntil([&] { return !Exists(link); })) << "removed after the unmap";
  UnmapAllAndShutdown();
}

}  // namespace
}  // namespace nbdk
