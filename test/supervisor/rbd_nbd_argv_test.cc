// Unit tests for the pure pieces: argv validation, argv written and read
// back, device lines, backoff, log file trimming, pidfd watch.
#include "supervisor/rbd_nbd_argv.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

// A snapshot is mapped read-only, without the image's lock, under a name
// Ceph's rule allows.
TEST(RbdNbdArgvTest, ASnapshotIsMappedReadOnlyWithoutExclusive) {
  MapRequest r;
  r.volume_id = "v1";
  r.image = {"rbd", "", "img", {}, "", "csi", "/k", "monday"};
  r.read_only = true;
  EXPECT_TRUE(ValidateMapRequest(r).ok());
  r.read_only = false;
  Status s = ValidateMapRequest(r);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("read-only"), std::string::npos) << s.message();
  r.read_only = true;
  r.map_options = {"--try-netlink", "--exclusive"};
  s = ValidateMapRequest(r);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("--exclusive"), std::string::npos) << s.message();
  r.map_options = {"--try-netlink"};
  for (const char* bad : {"-x", "a@b", "a b"}) {
    r.image.snap = bad;
    EXPECT_NE(ValidateMapRequest(r).message().find("snap"), std::string::npos) << bad;
  }
  // The head may still be mapped with its lock.
  r.image.snap.clear();
  r.read_only = false;
  r.map_options = {"--exclusive"};
  EXPECT_TRUE(ValidateMapRequest(r).ok());
}

TEST(RbdNbdArgvTest, ASnapshotIsTheLastTokenOfMapAndAttach) {
  SupervisorConfig c;
  c.rbd_nbd_path = "rbd-nbd";
  MapRequest r;
  r.volume_id = "v1";
  r.image = {"pool", "ns", "img", {}, "", "u", "/k", "monday"};
  r.read_only = true;
  for (const auto& argv : {RbdNbdMapArgv(c, r, "c1", false), RbdNbdAttachArgv(c, r, "c1", "/dev/nbd4", false)}) {
    EXPECT_EQ(argv.back(), "pool/ns/img@monday");
    EXPECT_NE(std::find(argv.begin(), argv.end(), "--read-only"), argv.end());
  }
}

// A single-node writer's map and attach take the lock: --exclusive, once,
// even when the StorageClass's map options already ask for it.
TEST(RbdNbdArgvTest, ExclusiveIsWrittenOnceWhenAsked) {
  SupervisorConfig c;
  c.rbd_nbd_path = "rbd-nbd";
  MapRequest r;
  r.volume_id = "v1";
  r.image = {"pool", "", "img", {}, "", "u", "/k"};
  auto count = [](const std::vector<std::string>& argv) { return std::count(argv.begin(), argv.end(), "--exclusive"); };
  EXPECT_EQ(count(RbdNbdMapArgv(c, r, "c1", true)), 1);
  EXPECT_EQ(count(RbdNbdAttachArgv(c, r, "c1", "/dev/nbd2", true)), 1);
  EXPECT_EQ(count(RbdNbdMapArgv(c, r, "c1", false)), 0);
  r.map_options = {"--exclusive"};
  EXPECT_EQ(count(RbdNbdMapArgv(c, r, "c1", true)), 1);
  EXPECT_EQ(count(RbdNbdAttachArgv(c, r, "c1", "/dev/nbd2", false)), 1);
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
  auto argv = RbdNbdMapArgv(c, r, "c1", false);
  std::string joined;
  for (auto& a : argv) joined += a + " ";
  EXPECT_EQ(joined,
            "rbd-nbd map -f --try-netlink --reattach-timeout 300 --cookie c1 --id u --keyfile /k --rbd_cache=false "
            "--err_to_stderr=true --admin-socket /var/lib/nbdkeeper/asok/$pid.asok --read-only pool/ns/img ");
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

SupervisorConfig ArgvConfig() {
  SupervisorConfig c;
  c.rbd_nbd_path = "/usr/bin/rbd-nbd";
  c.reattach_timeout_s = 300;
  return c;
}

// Every field the builders write, each in a form they write differently.
std::vector<MapRequest> Requests() {
  MapRequest plain;
  plain.image = {"rbd", "", "csi-vol-a", {}, "", "csi", "/run/k"};
  MapRequest full;
  full.image = {"pool", "tenant", "img", {"10.0.0.1:6789", "[::1]:3300"}, "/etc/ceph/x.conf", "u", "/k"};
  full.read_only = true;
  // --try-netlink again: the builders write it as well.
  full.map_options = {"--exclusive", "--io-timeout=0", "--try-netlink"};
  MapRequest snapshot;
  snapshot.image = {"pool", "tenant", "img", {}, "", "u", "/k", "before-upgrade"};
  snapshot.read_only = true;
  return {plain, full, snapshot};
}

void ExpectReadBack(const MapRequest& got, const MapRequest& built, const std::string& cookie) {
  EXPECT_EQ(got.volume_id, "");  // not in argv
  EXPECT_EQ(got.image.Spec(), built.image.Spec());
  EXPECT_EQ(got.image.snap, built.image.snap);
  EXPECT_EQ(got.image.pool, built.image.pool);
  EXPECT_EQ(got.image.rados_namespace, built.image.rados_namespace);
  EXPECT_EQ(got.image.image, built.image.image);
  EXPECT_EQ(got.image.monitors, built.image.monitors);
  EXPECT_EQ(got.image.ceph_conf, built.image.ceph_conf);
  EXPECT_EQ(got.image.user_id, built.image.user_id);
  EXPECT_EQ(got.image.keyfile, built.image.keyfile);
  EXPECT_EQ(got.read_only, built.read_only);
  EXPECT_EQ(got.map_options, built.map_options);
  EXPECT_EQ(got.cookie, cookie);
}

TEST(RbdNbdArgvTest, AMapReadsBackAsItWasBuilt) {
  SupervisorConfig c = ArgvConfig();
  for (const MapRequest& r : Requests()) {
    auto line = ParseRbdNbdArgv(RbdNbdMapArgv(c, r, "c1", false));
    ASSERT_TRUE(line.ok()) << line.status().ToString();
    EXPECT_EQ(line->program, "/usr/bin/rbd-nbd");
    EXPECT_EQ(line->command, "map");
    EXPECT_TRUE(line->foreground);
    EXPECT_EQ(line->reattach_timeout_s, 300u);
    EXPECT_EQ(line->device, "");
    ExpectReadBack(line->request, r, "c1");
  }
}

TEST(RbdNbdArgvTest, AnAttachReadsBackWithItsDevice) {
  SupervisorConfig c = ArgvConfig();
  for (const MapRequest& r : Requests()) {
    auto line = ParseRbdNbdArgv(RbdNbdAttachArgv(c, r, "c1", "/dev/nbd3", false));
    ASSERT_TRUE(line.ok()) << line.status().ToString();
    EXPECT_EQ(line->command, "attach");
    EXPECT_TRUE(line->foreground);
    EXPECT_EQ(line->device, "/dev/nbd3");
    EXPECT_EQ(line->reattach_timeout_s, 300u);
    ExpectReadBack(line->request, r, "c1");
  }
}

TEST(RbdNbdArgvTest, AnUnmapReadsBackWithItsDevice) {
  auto line = ParseRbdNbdArgv(RbdNbdUnmapArgv(ArgvConfig(), "/dev/nbd1"));
  ASSERT_TRUE(line.ok()) << line.status().ToString();
  EXPECT_EQ(line->program, "/usr/bin/rbd-nbd");
  EXPECT_EQ(line->command, "unmap");
  EXPECT_FALSE(line->foreground);
  EXPECT_EQ(line->device, "/dev/nbd1");
}

// A server another nbdkeeper version started (without --err_to_stderr, with
// an option this one never writes) still reads.
TEST(RbdNbdArgvTest, OptionsItDoesNotWriteAreReadAsMapOptions) {
  auto line = ParseRbdNbdArgv({"rbd-nbd", "map", "-f", "--cookie", "c1", "--show-cookie", "--id", "u", "rbd/img"});
  ASSERT_TRUE(line.ok()) << line.status().ToString();
  EXPECT_EQ(line->request.map_options, (std::vector<std::string>{"--show-cookie"}));
  EXPECT_EQ(line->request.image.Path(), "rbd/img");
  EXPECT_EQ(line->reattach_timeout_s, 0u);
}

TEST(RbdNbdArgvTest, MalformedArgvNamesWhatIsWrong) {
  auto error = [](std::vector<std::string> argv) {
    auto line = ParseRbdNbdArgv(argv);
    EXPECT_EQ(line.status().code(), Code::kInvalidArgument);
    return line.status().message();
  };
  EXPECT_EQ(error({}), "rbd-nbd argv: no command");
  EXPECT_EQ(error({"rbd-nbd"}), "rbd-nbd argv: no command");
  EXPECT_EQ(error({"rbd-nbd", "list-mapped"}), "rbd-nbd argv: command 'list-mapped' is not map, attach or unmap");
  EXPECT_EQ(error({"rbd-nbd", "map", "rbd/img", "--cookie"}), "rbd-nbd argv: --cookie without a value");
  EXPECT_EQ(error({"rbd-nbd", "map", "--cookie", "a", "--cookie", "b", "rbd/img"}),
            "rbd-nbd argv: --cookie given twice");
  EXPECT_EQ(error({"rbd-nbd", "map", "--reattach-timeout", "5m", "rbd/img"}),
            "rbd-nbd argv: --reattach-timeout '5m' is not a number of seconds");
  EXPECT_EQ(error({"rbd-nbd", "map", "--reattach-timeout", "", "rbd/img"}),
            "rbd-nbd argv: --reattach-timeout '' is not a number of seconds");
  EXPECT_EQ(error({"rbd-nbd", "map", "-f", "--cookie", "c1"}), "rbd-nbd argv: map names no image");
  EXPECT_EQ(error({"rbd-nbd", "attach", "rbd/a", "rbd/b"}),
            "rbd-nbd argv: attach names more than one image: 'rbd/a' and 'rbd/b'");
  EXPECT_EQ(error({"rbd-nbd", "unmap"}), "rbd-nbd argv: unmap names no device");
  EXPECT_EQ(error({"rbd-nbd", "unmap", "/dev/nbd1", "/dev/nbd2"}),
            "rbd-nbd argv: unmap names more than one device: '/dev/nbd1' and '/dev/nbd2'");
  for (const char* image : {"img", "rbd/", "/img", "rbd//img", "a/b/c/d", "rbd/img@", "img@snap", "rbd/@snap"}) {
    EXPECT_EQ(error({"rbd-nbd", "map", image}),
              std::string("rbd-nbd argv: image '") + image + "' is not pool/[namespace/]image[@snap]");
  }
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
