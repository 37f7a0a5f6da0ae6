// Supervisor: map, map failures, planned unmap/detach, logs, release.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test/supervisor/supervisor_fixture.h"

namespace nbdk {
namespace {

TEST_F(SupervisorTest, MapConnectsWritesIoTimeoutAndUsesTheExactCommandLine) {
  Behave("img1.map", "device=/dev/nbd3");
  MakeSysfs(3);
  MapRequest r = Request("vol1", "img1");
  r.map_options = {"--exclusive"};
  auto dev = MapAndWait(r);
  ASSERT_TRUE(dev.ok()) << dev.status().ToString();
  EXPECT_EQ(*dev, "/dev/nbd3");
  EXPECT_EQ(ReadFile(dir_ + "/sys/block/nbd3/queue/io_timeout"), "2000\n");

  auto s = Snap("vol1");
  EXPECT_EQ(s.state, MappingState::kConnected);
  EXPECT_EQ(s.device, "/dev/nbd3");
  EXPECT_EQ(s.cookie, "vol1");
  EXPECT_GT(s.pid, 0);
  EXPECT_EQ(s.image, "rbd/img1");
  ASSERT_EQ(ArgvLog().size(), 1u);
  EXPECT_EQ(ArgvLog()[0], std::string(FAKE_RBD_NBD_PATH) +
                              " map -f --try-netlink --reattach-timeout 30 --cookie vol1 --id csi"
                              " --keyfile /etc/ceph/csi.key --rbd_cache=false --err_to_stderr=true --admin-socket " +
                              config_.state_dir +
                              "/asok/$pid.asok"
                              " --mon_host 10.0.0.1:6789,10.0.0.2:6789"
                              " -c /etc/ceph/ceph.conf --exclusive rbd/img1");
  EXPECT_EQ(sup().counters().maps_succeeded, 1u);
  EXPECT_EQ(sup().transitions().Count(MappingState::kMapping, MappingState::kConnected), 1u);
  EXPECT_EQ(sup().CountByState()[static_cast<int>(MappingState::kConnected)], 1u);

  // A second Map of the same volume is idempotent: no second rbd-nbd.
  auto again = MapAndWait(r);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, "/dev/nbd3");
  EXPECT_EQ(ArgvLog().size(), 1u);
  MapRequest other = Request("vol1", "img2");
  EXPECT_EQ(MapAndWait(other).status().code(), Code::kAlreadyExists);

  EXPECT_TRUE(UnmapAndWait("vol1").ok());
  EXPECT_FALSE(sup().Snapshot("vol1").has_value());
  EXPECT_EQ(ArgvLog().back(), std::string(FAKE_RBD_NBD_PATH) + " unmap /dev/nbd3");
  EXPECT_EQ(sup().transitions().Count(MappingState::kConnected, MappingState::kUnmapping), 1u);
  EXPECT_EQ(sup().transitions().Count(MappingState::kUnmapping, MappingState::kUnmapped), 1u);
  EXPECT_EQ(CountArgv(" attach "), 0);
  EXPECT_EQ(sup().counters().deaths, 0u);
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, MapThatExitsFailsWithItsStderr) {
  Behave("img1.map", "mode=exit exit_code=1 stderr=rbd-nbd:_image_not_found");
  auto dev = MapAndWait(Request("vol1", "img1"));
  ASSERT_FALSE(dev.ok());
  EXPECT_EQ(dev.status().code(), Code::kUnavailable);
  EXPECT_NE(dev.status().message().find("image not found"), std::string::npos) << dev.status().ToString();
  EXPECT_NE(dev.status().message().find("status 1"), std::string::npos) << dev.status().ToString();
  EXPECT_FALSE(sup().Snapshot("vol1").has_value());
  EXPECT_EQ(sup().transitions().Count(MappingState::kMapping, MappingState::kFailed), 1u);
  EXPECT_EQ(sup().counters().maps_failed, 1u);
  // A failed map can be retried.
  Behave("img1.map", "device=/dev/nbd1");
  EXPECT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, MapThatHangsOrPrintsGarbageIsKilledAtTheDeadline) {
  config_.map_deadline_ms = 200;
  Behave("hang.map", "mode=hang");
  Behave("junk.map", "mode=garbage");
  for (const char* image : {"hang", "junk"}) {
    auto dev = MapAndWait(Request(std::string("v-") + image, image));
    ASSERT_FALSE(dev.ok());
    EXPECT_EQ(dev.status().code(), Code::kDeadlineExceeded) << dev.status().ToString();
    EXPECT_NE(dev.status().message().find("no device within 200 ms"), std::string::npos);
  }
  EXPECT_EQ(sup().counters().maps_failed, 2u);
  EXPECT_TRUE(sup().Snapshots().empty());
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, ConcurrentMapsOfOneVolumeShareOneRbdNbd) {
  Behave("img1.map", "device=/dev/nbd2 delay_ms=100");
  std::vector<Result<std::string>> results;
  for (int i = 0; i < 3; ++i) {
    sup().Map(Request("vol1", "img1"), [&](Result<std::string> r) { results.push_back(std::move(r)); });
  }
  // Once rbd-nbd map runs (before that, an unmap calls the queued map
  // off: supervisor_attach_queue_test.cc).
  ASSERT_TRUE(RunUntil([&] { return CountArgv(" map ") == 1; }));
  std::optional<Status> unmap;
  sup().Unmap("vol1", [&](Status s) { unmap = s; });
  ASSERT_TRUE(unmap.has_value());
  EXPECT_EQ(unmap->code(), Code::kAborted) << "no unmap while the map is in flight";
  ASSERT_TRUE(RunUntil([&] { return results.size() == 3; }));
  for (const auto& r : results) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(*r, "/dev/nbd2");
  }
  EXPECT_EQ(CountArgv(" map "), 1);
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, LinkDeadDuringAPlannedUnmapNeverRestarts) {
  Behave("img1.map", "device=/dev/nbd1");
  Behave("nbd1.unmap", "exit_code=0");  // leaves the server running
  config_.unmap_exit_wait_ms = 200;     // then the supervisor kills it
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  RunFor(150);
  std::optional<Status> got;
  sup().Unmap("vol1", [&](Status s) { got = s; });
  sup().OnLinkDead(1);  // the kernel reports planned stops too
  EXPECT_EQ(Snap("vol1").state, MappingState::kUnmapping);
  ASSERT_TRUE(RunUntil([&] { return got.has_value(); }));
  EXPECT_TRUE(got->ok()) << got->ToString();
  RunFor(200);
  EXPECT_EQ(CountArgv(" attach "), 0);
  EXPECT_EQ(sup().counters().deaths, 0u);
  EXPECT_EQ(sup().counters().link_dead_kills, 0u);
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, DetachDuringAReattachStopsIt) {
  Behave("img1.map", "device=/dev/nbd1");
  Behave("img1.attach", "mode=hang");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  kill(Snap("vol1").pid, SIGKILL);
  ASSERT_TRUE(RunUntil([&] { return CountArgv(" attach ") == 1; }));
  EXPECT_EQ(Snap("vol1").state, MappingState::kReattaching);
  std::optional<Status> got;
  sup().Detach("vol1", [&](Status s) { got = s; });
  ASSERT_TRUE(RunUntil([&] { return got.has_value(); }));
  EXPECT_TRUE(got->ok());
  EXPECT_FALSE(sup().Snapshot("vol1").has_value());
  RunFor(200);
  EXPECT_EQ(CountArgv(" attach "), 1);
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, IoTimeoutWriteFailureIsCountedNotFatal) {
  Behave("img1.map", "device=/dev/nbd4");  // no sysfs entry for nbd4
  auto dev = MapAndWait(Request("vol1", "img1"));
  ASSERT_TRUE(dev.ok());
  EXPECT_EQ(sup().counters().io_timeout_write_failures, 1u);
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, ForbiddenMapOptionsAreRejectedBeforeAnySpawn) {
  MapRequest r = Request("vol1", "img1");
  r.map_options = {"--io-timeout", "5"};
  auto dev = MapAndWait(r);
  ASSERT_FALSE(dev.ok());
  EXPECT_EQ(dev.status().code(), Code::kInvalidArgument);
  EXPECT_NE(dev.status().message().find("io-timeout"), std::string::npos) << dev.status().ToString();
  r.map_options = {"--io-timeout=30"};
  EXPECT_EQ(MapAndWait(r).status().code(), Code::kInvalidArgument);
  r.map_options = {"--key", "AQBsecret"};
  EXPECT_EQ(MapAndWait(r).status().code(), Code::kInvalidArgument);
  r.map_options = {"--device", "/dev/nbd9"};
  EXPECT_EQ(MapAndWait(r).status().code(), Code::kInvalidArgument);
  r.map_options = {"--admin_socket=/etc/passwd"};
  EXPECT_EQ(MapAndWait(r).status().code(), Code::kInvalidArgument);
  r.map_options = {};
  r.image.pool = "--conf=/tmp/evil";
  EXPECT_EQ(MapAndWait(r).status().code(), Code::kInvalidArgument);
  r.image.pool = "rbd";
  r.map_options = {};
  r.volume_id = "../etc";
  EXPECT_EQ(MapAndWait(r).status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(ArgvLog().empty());
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, DetachTerminatesTheServerAndNeverRestarts) {
  Behave("img1.map", "device=/dev/nbd1");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  int pid = Snap("vol1").pid;
  std::optional<Status> got;
  sup().Detach("vol1", [&](Status s) { got = s; });
  ASSERT_TRUE(RunUntil([&] { return got.has_value(); }));
  EXPECT_TRUE(got->ok()) << got->ToString();
  EXPECT_NE(kill(pid, 0), 0);  // exited (and reaped by libuv)
  RunFor(200);
  EXPECT_EQ(CountArgv(" attach "), 0);
  EXPECT_EQ(CountArgv(" unmap "), 0);  // detach leaves the device configured
  EXPECT_EQ(sup().counters().deaths, 0u);
  EXPECT_FALSE(sup().Snapshot("vol1").has_value());
  std::optional<Status> unknown;
  sup().Detach("nope", [&](Status s) { unknown = s; });
  ASSERT_TRUE(unknown.has_value());
  EXPECT_EQ(unknown->code(), Code::kNotFound);
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, UnmapFailureWithALiveServerKeepsItConnected) {
  Behave("img1.map", "device=/dev/nbd2");
  Behave("nbd2.unmap", "exit_code=1 stderr=rbd-nbd:_device_busy");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  Status s = UnmapAndWait("vol1");
  EXPECT_EQ(s.code(), Code::kUnavailable);
  EXPECT_NE(s.message().find("device busy"), std::string::npos) << s.ToString();
  EXPECT_EQ(Snap("vol1").state, MappingState::kConnected);
  std::filesystem::remove(dir_ + "/fake/nbd2.unmap");
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, ChildOutputGoesToTheLogFileAndTheSnapshotTail) {
  Behave("img1.map", "device=/dev/nbd3 stderr=hello_from_rbd-nbd");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  auto s = Snap("vol1");
  std::string log = dir_ + "/state/logs/vol1.log";
  ASSERT_TRUE(RunUntil([&] { return ReadFile(log).find("serving /dev/nbd3") != std::string::npos; }));
  std::string text = ReadFile(log);
  EXPECT_NE(text.find("stderr: hello from rbd-nbd"), std::string::npos) << text;
  EXPECT_NE(text.find("stdout: /dev/nbd3"), std::string::npos) << text;
  s = Snap("vol1");
  EXPECT_EQ(s.log_path, log);
  std::string tail;
  for (const auto& l : s.output_tail) tail += l + "\n";
  EXPECT_NE(tail.find("stderr: hello from rbd-nbd"), std::string::npos) << tail;
  EXPECT_NE(tail.find("stdout: /dev/nbd3"), std::string::npos) << tail;
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, UnmapRemovesTheLogAndDetachKeepsIt) {
  Behave("img1.map", "device=/dev/nbd1");
  Behave("img2.map", "device=/dev/nbd2");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  ASSERT_TRUE(MapAndWait(Request("vol2", "img2")).ok());
  std::string log1 = dir_ + "/state/logs/vol1.log", log2 = dir_ + "/state/logs/vol2.log";
  ASSERT_TRUE(RunUntil([&] { return std::filesystem::exists(log1) && std::filesystem::exists(log2); }));
  ASSERT_TRUE(UnmapAndWait("vol1").ok());
  EXPECT_TRUE(RunUntil([&] { return !std::filesystem::exists(log1); })) << "the unmapped volume's log stays";
  std::optional<Status> detached;
  sup().Detach("vol2", [&](Status s) { detached = s; });
  ASSERT_TRUE(RunUntil([&] { return detached.has_value(); }));
  RunFor(100);
  EXPECT_TRUE(std::filesystem::exists(log2)) << "a detached volume is still staged";
  // A log left by an earlier daemon run goes with an unmap of a volume this
  // run never supervised.
  ASSERT_TRUE(UnmapAndWait("vol2").ok());
  EXPECT_TRUE(RunUntil([&] { return !std::filesystem::exists(log2); }));
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, SymlinkPlantedAtTheLogPathIsNotFollowed) {
  std::filesystem::create_directories(dir_ + "/state/logs");
  std::string victim = dir_ + "/victim";
  std::ofstream(victim) << "precious\n";
  ASSERT_EQ(::symlink(victim.c_str(), (dir_ + "/state/logs/vol1.log").c_str()), 0);
  Behave("img1.map", "device=/dev/nbd1 stderr=written_through_the_link");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  RunFor(300);  // the log flushes on the thread pool
  EXPECT_EQ(ReadFile(victim), "precious\n");
  UnmapAllAndShutdown();
}

TEST_F(SupervisorTest, ReleaseAllLeavesTheServerRunning) {
  Behave("img1.map", "device=/dev/nbd1");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  int pid = Snap("vol1").pid;
  auto released = sup().ReleaseAll();
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0].pid, pid);
  EXPECT_TRUE(sup().Snapshots().empty());
  RunFor(100);
  EXPECT_EQ(kill(pid, 0), 0) << "ReleaseAll must not kill rbd-nbd";
  // libuv forgot it: reap it here, by pid.
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  EXPECT_EQ(sup().counters().deaths, 0u);
  UnmapAllAndShutdown();
}

}  // namespace
}  // namespace nbdk
