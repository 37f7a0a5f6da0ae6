// Unit tests for the pure pieces: argv validation, device lines, backoff,
// log file trimming, pidfd watch.
#include "supervisor/rbd_nbd_argv.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "supervisor/output_log.h"
#include "supervisor/pidfd_watch.h"
#include "supervisor/reattach_backoff.h"

namespace nbdk {
namespace {

TEST(RbdNbdArgvTest, RequestValidationNamesTheField) {
  MapRequest r;
  r.volume_id = "v1";
  r.image = {"rbd", "", "img", {}, "", "csi", "/k"};
  EXPECT_TRUE(ValidateMapRequest(r).ok());
  r.image.pool = "";
  EXPECT_NE(ValidateMapRequest(r).message().find("pool"), std::string::npos);
  r.image.pool = "rbd";
  r.image.image = "a@snap";
  EXPECT_NE(ValidateMapRequest(r).message().find("image"), std::string::npos);
  r.image.image = "img";
  r.image.keyfile = "";
  EXPECT_NE(ValidateMapRequest(r).message().find("keyfile"), std::string::npos);
  r.image.keyfile = "/k";
  r.volume_id = "a/b";
  EXPECT_NE(ValidateMapRequest(r).message().find("volume_id"), std::string::npos);
}

TEST(RbdNbdArgvTest, NamespaceAndReadOnlyAppearInTheCommand) {
  SupervisorConfig c;
  c.rbd_nbd_path = "rbd-nbd";
  c.reattach_timeout_s = 300;
  MapRequest r;
  r.volume_id = "v1";
  r.image = {"pool", "ns", "img", {}, "", "u", "/k"};
  r.read_only = true;
  r.cookie = "c1";
  auto argv = RbdNbdMapArgv(c, r, "c1");
  std::string joined;
  for (auto& a : argv) joined += a + " ";
  EXPECT_EQ(joined, "rbd-nbd map -f --try-netlink --reattach-timeout 300 --cookie c1 --id u --keyfile /k --rbd_cache=false --err_to_stderr=true --read-only pool/ns/img ");
  EXPECT_EQ(RbdNbdUnmapArgv(c, "/dev/nbd1"), (std::vector<std::string>{"rbd-nbd", "unmap", "/dev/nbd1"}));
}

TEST(RbdNbdArgvTest, DeviceLines) {
  EXPECT_EQ(ParseDeviceLine("/dev/nbd0"), "/dev/nbd0");
  EXPECT_EQ(ParseDeviceLine("/dev/nbd12 3c1f-uuid"), "/dev/nbd12");
  EXPECT_FALSE(ParseDeviceLine("/dev/nbd"));
  EXPECT_FALSE(ParseDeviceLine("/dev/nbdx"));
  EXPECT_FALSE(ParseDeviceLine("/dev/sda1"));
  EXPECT_FALSE(ParseDeviceLine("rbd-nbd: failed"));
  EXPECT_EQ(*NbdDeviceIndex("/dev/nbd7"), 7);
}

TEST(ReattachBackoffTest, FirstIsImmediateThenDoublesUpToTheCap) {
  std::vector<uint64_t> got;
  for (uint32_t i = 0; i < 7; ++i) got.push_back(ReattachDelayMs(i, 100, 500));
  EXPECT_EQ(got, (std::vector<uint64_t>{0, 100, 200, 400, 500, 500, 500}));
}

TEST(OutputLogTest, TrimKeepsTheTailFromALineStart) {
  char tmpl[] = "/tmp/nbdk-log-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string path = dir + "/v.log";
  {
    std::ofstream out(path);
    for (int i = 0; i < 100; ++i) out << "line " << i << "\n";
  }
  OutputLog::TrimFile(path, 300, 150);
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  EXPECT_LE(text.size(), 150u);
  EXPECT_EQ(text.rfind("line ", 0), 0u) << text;
  EXPECT_NE(text.find("line 99\n"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(OutputLogTest, AppendsOffTheLoopAndKeepsATail) {
  char tmpl[] = "/tmp/nbdk-log-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  EventLoop loop;
  {
    OutputLog log(loop, dir + "/logs/v.log", 2, 1 << 20);
    for (int i = 0; i < 5; ++i) log.Append("map[1] stderr", "msg " + std::to_string(i));
    EXPECT_EQ(log.Tail(), (std::vector<std::string>{"map[1] stderr: msg 3", "map[1] stderr: msg 4"}));
  }
  EXPECT_TRUE(loop.Shutdown().ok());  // runs the pending flushes to completion
  std::ifstream in(dir + "/logs/v.log");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("map[1] stderr: msg 0"), std::string::npos);
  EXPECT_NE(ss.str().find("map[1] stderr: msg 4"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(PidfdWatchTest, ReportsTheExitOfAProcessThatIsNotALibuvChild) {
  EventLoop loop;
  int pid = fork();
  if (pid == 0) {
    pause();
    _exit(0);
  }
  bool exited = false;
  auto w = PidfdWatch::Open(loop, pid, [&] {
    exited = true;
    loop.Stop();
  });
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_TRUE((*w)->Kill(SIGTERM).ok());
  loop.Run();
  EXPECT_TRUE(exited);
  waitpid(pid, nullptr, 0);
  w->reset();
  EXPECT_EQ(PidfdWatch::Open(loop, pid, [] {}).status().code(), Code::kNotFound);
  EXPECT_TRUE(loop.Shutdown().ok());
}

}  // namespace
}  // namespace nbdk
