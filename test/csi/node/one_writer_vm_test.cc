// One writer, its brief-holder and snapshot rules (supervisor/image_fence.h)
// on the real kernel and Ceph, in node_vm's boot and daemon: a volume whose
// rbd-nbd is killed while other clients use the image is re-attached, never
// fenced, and its writer sees no IO error. Those clients: `rbd resize` in a
// loop (each one a Controller's brief lock holder, issue 41 A4), the client
// of a first attach that died, and a snapshot of the image staged beside it
// (a read-only map, A3); and one it waits for: a read-write opener that
// stays a while.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "test/common/vm_command.h"
#include "test/csi/node_vm_fixture.h"

namespace nbdk::vmtest {
namespace {

using Clock = std::chrono::steady_clock;
using Mode = csi::v1::VolumeCapability::AccessMode;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Where the markers sit on a block volume: past the Writer's 256 blocks.
constexpr off_t kBlockMarkerOffset = 2 << 20;

// One 4 KiB block at kBlockMarkerOffset of a block device, O_DIRECT: written
// (and on the OSDs when it returns) or read.
void WriteBlockMarker(const std::string& device, const std::string& text) {
  int fd = ::open(device.c_str(), O_WRONLY | O_DIRECT | O_DSYNC | O_CLOEXEC);
  ASSERT_GE(fd, 0) << device << ": " << std::strerror(errno);
  void* buf = nullptr;
  ASSERT_EQ(::posix_memalign(&buf, 4096, 4096), 0);
  std::memset(buf, 0, 4096);
  std::memcpy(buf, text.data(), std::min<size_t>(text.size(), 4095));
  EXPECT_EQ(::pwrite(fd, buf, 4096, kBlockMarkerOffset), 4096) << device << ": " << std::strerror(errno);
  ::free(buf);
  ::close(fd);
}

std::string ReadBlockMarker(const std::string& device) {
  int fd = ::open(device.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) return std::string("open failed: ") + std::strerror(errno);
  void* buf = nullptr;
  if (::posix_memalign(&buf, 4096, 4096) != 0) return "posix_memalign failed";
  ssize_t n = ::pread(fd, buf, 4096, kBlockMarkerOffset);
  std::string text = n == 4096 ? std::string(static_cast<const char*>(buf)) : "read failed";
  ::free(buf);
  ::close(fd);
  return text;
}

class OneWriterVmTest : public NodeVmTest {
 protected:
  // Stages and publishes `volume_id` as a block volume; its device path.
  std::string StageBlock(csi::v1::NodeStageVolumeRequest req) {
    const std::string id = req.volume_id();
    grpc::Status staged = Stage(req);
    EXPECT_TRUE(staged.ok()) << id << ": " << staged.error_message();
    std::string target = TargetPath(id, 1);
    std::filesystem::create_directories(std::filesystem::path(target).parent_path());
    bool read_only = req.volume_capability().access_mode().mode() == Mode::MULTI_NODE_READER_ONLY;
    grpc::Status published = Publish(id, target, req.volume_capability(), read_only);
    EXPECT_TRUE(published.ok()) << id << ": " << published.error_message();
    return target;
  }

  // SIGKILLs the rbd-nbd serving `volume_id` and waits up to 90 s for its
  // re-attach; false when it is not Connected with one more restart by
  // then, or when it was ever Fenced on the way.
  bool KillAndWaitForReattach(const std::string& volume_id, double* heal_s) {
    const int pid = std::stoi(StatusField(volume_id, "pid"));
    const int restarts = std::stoi(StatusField(volume_id, "restarts"));
    EXPECT_GT(pid, 0);
    Clock::time_point killed = Clock::now();
    EXPECT_EQ(::kill(pid, SIGKILL), 0);
    while (Since(killed) < 90) {
      std::string state = StatusField(volume_id, "state");
      if (state == "Fenced") {
        ADD_FAILURE() << volume_id << " fenced: " << StatusOf(volume_id);
        return false;
      }
      if (state == "Connected" && StatusField(volume_id, "restarts") == std::to_string(restarts + 1)) {
        *heal_s = Since(killed);
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << volume_id << " not re-attached in 90 s: " << StatusOf(volume_id);
    return false;
  }
};

// `rbd resize` one MiB larger, again and again: each run is a new Ceph
// client that opens the image and, while no live rbd-nbd owns the lock,
// takes it for its one operation, as a Controller's expand does.
class ResizeLoop {
 public:
  ResizeLoop(const std::string& image, int start_mib) : image_(image), mib_(start_mib) {
    thread_ = std::thread([this] { Run(); });
  }
  ~ResizeLoop() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int done() const { return done_; }
  int failed() const { return failed_; }
  const std::string& last_failure() const { return last_failure_; }

 private:
  void Run() {
    while (!stop_) {
      auto out = RunCommand(
          Ceph().Rbd({"resize", "--no-progress", "--size", std::to_string(++mib_), Ceph().pool + "/" + image_}), true);
      if (out.ok() && out->exit.code == 0) {
        ++done_;
      } else {
        ++failed_;
        last_failure_ = out.ok() ? out->exit.ToString() + ": " + out->stdout_text : out.status().ToString();
      }
    }
  }

  std::string image_;
  int mib_;
  std::atomic<bool> stop_{false};
  std::atomic<int> done_{0}, failed_{0};
  std::string last_failure_;
  std::thread thread_;
};

TEST_F(OneWriterVmTest, AResizeLoopThroughAKillIsNoTakeover) {
  const std::string image = "vol-resize-kill";
  CreateImage(image);
  std::string device = StageBlock(StageReq(image, BlockCap()));
  Result<std::unique_ptr<Writer>> writer = Writer::Start(device);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();

  ResizeLoop resizes(image, 64);
  Clock::time_point begun = Clock::now();
  while (resizes.done() + resizes.failed() < 1 && Since(begun) < 60) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const int before_kill = resizes.done();
  double heal_s = 0;
  ASSERT_TRUE(KillAndWaitForReattach(image, &heal_s));
  // Resizes go on against the new server: it must stay, never fenced.
  std::this_thread::sleep_for(std::chrono::seconds(5));
  resizes.Stop();
  EXPECT_EQ(StatusField(image, "state"), "Connected") << StatusOf(image);
  (*writer)->Stop();
  std::printf(
      "[ resize-kill ] re-attached in %.1f s; resizes: %d before the kill, %d in all, %d failed%s%s; "
      "writer: %llu writes, %llu IO errors, longest %.2f s\n",
      heal_s, before_kill, resizes.done(), resizes.failed(), resizes.failed() ? ", last: " : "",
      resizes.last_failure().c_str(), static_cast<unsigned long long>((*writer)->writes()),
      static_cast<unsigned long long>((*writer)->errors()), (*writer)->longest_s());
  EXPECT_EQ((*writer)->errors(), 0u);
  EXPECT_GT(resizes.done(), before_kill) << "no resize ran through the kill and heal";
  EXPECT_TRUE(VerifyWriterData(device, (*writer)->writes()).ok());
  ASSERT_GRPC_OK(Unpublish(image, TargetPath(image, 1)));
  ASSERT_GRPC_OK(Unstage(image));
}

// A client that opened the image read-write and stays through the kill
// without taking the lock (here `rbd watch`, whose watch on the image's
// header is what a read-write open registers): it may be a cooperative writer that
// takes the lock the moment it is free, so the re-attach waits, naming it;
// once it has left the re-attach goes on, and the writer saw a pause, no
// IO error. It leaves cleanly: its stdin, a `sleep`, ends.
TEST_F(OneWriterVmTest, AReadWriteOpenerThroughAKillIsWaitedFor) {
  const std::string image = "vol-opener-kill";
  CreateImage(image);
  std::string device = StageBlock(StageReq(image, BlockCap()));
  Result<std::unique_ptr<Writer>> writer = Writer::Start(device);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  std::vector<std::string> argv = {"sh", "-c", "sleep 15 | exec \"$@\"", "sh"};
  for (const std::string& a : Ceph().Rbd({"watch", Ceph().pool + "/" + image})) argv.push_back(a);
  auto opener = SpawnedChild::Spawn(argv);
  ASSERT_TRUE(opener.ok()) << opener.status().ToString();
  Result<std::string> ready = opener->ReadLine(std::chrono::seconds(60));
  ASSERT_TRUE(ready.ok() && ready->find("press enter to exit") != std::string::npos)
      << (ready.ok() ? *ready : ready.status().ToString());

  const int pid = std::stoi(StatusField(image, "pid"));
  Clock::time_point killed = Clock::now();
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  bool waited = false;
  while (!opener->Wait(std::chrono::milliseconds(100)).ok() && Since(killed) < 60) {
    EXPECT_NE(StatusField(image, "state"), "Connected") << "re-attached beside a read-write opener";
    waited |= StatusField(image, "reason").find("waiting for it to leave") != std::string::npos;
  }
  const double left_s = Since(killed);
  EXPECT_TRUE(waited) << StatusOf(image);
  while (!(StatusField(image, "state") == "Connected" && StatusField(image, "restarts") == "1") && Since(killed) < 90) {
    ASSERT_NE(StatusField(image, "state"), "Fenced") << StatusOf(image);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const double heal_s = Since(killed);
  (*writer)->Stop();
  std::printf(
      "[ opener-kill ] the opener left %.1f s after the kill, re-attached at %.1f s; writer: %llu writes, "
      "%llu IO errors, longest %.2f s\n",
      left_s, heal_s, static_cast<unsigned long long>((*writer)->writes()),
      static_cast<unsigned long long>((*writer)->errors()), (*writer)->longest_s());
  EXPECT_EQ(StatusField(image, "state"), "Connected") << StatusOf(image);
  EXPECT_EQ((*writer)->errors(), 0u);
  EXPECT_TRUE(VerifyWriterData(device, (*writer)->writes()).ok());
  ASSERT_GRPC_OK(Unpublish(image, TargetPath(image, 1)));
  ASSERT_GRPC_OK(Unstage(image));
}

// A re-attach whose first attach dies (a wrapper hides that rbd-nbd's
// device line and SIGKILLs it 2 s in, likely after it took the image's lock
// and served a moment): the dead attempt's client is this volume's own, so
// the next attempt breaks its lock and serves; no fence, no IO error.
TEST_F(OneWriterVmTest, AFailedFirstAttachIsNoTakeover) {
  const std::string image = "vol-failed-attach";
  CreateImage(image);
  const std::string wrapper = "/run/nbdk-first-attach-dies";
  const std::string marker = "/run/nbdk-first-attach-died";
  std::filesystem::remove(marker);
  {
    std::ofstream out(wrapper);
    out << "#!/bin/sh\n"
           "case \" $* \" in *\" attach \"*) [ -e "
        << marker
        << " ] || {\n"
           "  touch "
        << marker
        << "\n"
           "  rbd-nbd \"$@\" >/dev/null & sleep 2; kill -9 $!; wait $!; exit 1; } ;; esac\n"
           "exec rbd-nbd \"$@\"\n";
  }
  std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
  VmNode flaky("/run/nbdk-node-flaky", "node-flaky");
  std::string error;
  ASSERT_TRUE(flaky.Start(true, {"--reattach-timeout=60", "--rbd-nbd=" + wrapper}, &error)) << error;
  ASSERT_GRPC_OK(flaky.Stage(flaky.StageReq(image, MountCapability("ext4"))));
  const std::string data = flaky.StagingPath(image) + "/" + image + "/writer.dat";
  Result<std::unique_ptr<Writer>> writer = Writer::Start(data);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  std::this_thread::sleep_for(std::chrono::seconds(2));

  Clock::time_point killed = Clock::now();
  ASSERT_EQ(::kill(std::stoi(flaky.StatusField(image, "pid")), SIGKILL), 0);
  bool fenced = false;
  while (Since(killed) < 90 && !fenced &&
         !(flaky.StatusField(image, "state") == "Connected" && flaky.StatusField(image, "restarts") == "1")) {
    fenced = flaky.StatusField(image, "state") == "Fenced";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const double heal_s = Since(killed);
  const std::string reason = flaky.StatusField(image, "reason");
  (*writer)->Stop();
  std::printf("[ failed-attach ] %s after %.1f s: %s; writer: %llu writes, %llu IO errors, longest %.2f s\n",
              flaky.StatusField(image, "state").c_str(), heal_s, reason.c_str(),
              static_cast<unsigned long long>((*writer)->writes()),
              static_cast<unsigned long long>((*writer)->errors()), (*writer)->longest_s());
  EXPECT_FALSE(fenced) << flaky.StatusOf(image);
  EXPECT_EQ(flaky.StatusField(image, "state"), "Connected") << flaky.StatusOf(image);
  EXPECT_TRUE(std::filesystem::exists(marker)) << "the wrapper never killed an attach";
  EXPECT_EQ(reason.find("after 1 attempt(s)"), std::string::npos) << "the first attach did not fail: " << reason;
  EXPECT_EQ((*writer)->errors(), 0u);
  EXPECT_TRUE(VerifyWriterData(data, (*writer)->writes()).ok());
  EXPECT_GRPC_OK(flaky.Unstage(image));
  int st = flaky.Stop();
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "node-flaky exit";
}

TEST_F(OneWriterVmTest, ASnapshotStagedBesideItsHeadNeitherFencesNorIsFenced) {
  const std::string image = "vol-snap-head";
  const std::string snap_id = "vol-snap-head-s1";
  // An earlier run's image in this VM keeps its snapshot until purged.
  (void)RunCommand(Ceph().Rbd({"snap", "purge", "--no-progress", Ceph().pool + "/" + image}), true);
  CreateImage(image);
  std::string head = StageBlock(StageReq(image, BlockCap()));
  WriteBlockMarker(head, "before the snapshot");
  auto created = RunCommand(Ceph().Rbd({"snap", "create", "--no-progress", Ceph().pool + "/" + image + "@s1"}), true);
  ASSERT_TRUE(created.ok() && created->exit.code == 0) << (created.ok() ? created->stdout_text : "");
  WriteBlockMarker(head, "after the snapshot");

  csi::v1::NodeStageVolumeRequest snap_req = StageReq(snap_id, BlockCapability(Mode::MULTI_NODE_READER_ONLY));
  (*snap_req.mutable_volume_context())["imageName"] = image;
  (*snap_req.mutable_volume_context())["imageSnapshot"] = "s1";
  std::string snap = StageBlock(snap_req);
  EXPECT_EQ(ReadBlockMarker(snap), "before the snapshot");

  Result<std::unique_ptr<Writer>> writer = Writer::Start(head);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  double head_heal_s = 0, snap_heal_s = 0;
  EXPECT_TRUE(KillAndWaitForReattach(image, &head_heal_s)) << "the head, its snapshot mapped beside it";
  EXPECT_EQ(StatusField(snap_id, "state"), "Connected") << StatusOf(snap_id);
  EXPECT_TRUE(KillAndWaitForReattach(snap_id, &snap_heal_s)) << "the snapshot, its head written beside it";
  EXPECT_EQ(StatusField(image, "state"), "Connected") << StatusOf(image);
  EXPECT_EQ(StatusField(image, "restarts"), "1") << "the snapshot's re-attach touched the head";
  (*writer)->Stop();
  std::printf(
      "[ snapshot-head ] head re-attached in %.1f s, snapshot in %.1f s; "
      "head's writer: %llu writes, %llu IO errors, longest %.2f s\n",
      head_heal_s, snap_heal_s, static_cast<unsigned long long>((*writer)->writes()),
      static_cast<unsigned long long>((*writer)->errors()), (*writer)->longest_s());
  EXPECT_EQ((*writer)->errors(), 0u);
  EXPECT_TRUE(VerifyWriterData(head, (*writer)->writes()).ok());
  EXPECT_EQ(ReadBlockMarker(snap), "before the snapshot") << "the snapshot's device serves the snapshot";
  EXPECT_EQ(ReadBlockMarker(head), "after the snapshot");

  ASSERT_GRPC_OK(Unpublish(snap_id, TargetPath(snap_id, 1)));
  ASSERT_GRPC_OK(Unstage(snap_id));
  ASSERT_GRPC_OK(Unpublish(image, TargetPath(image, 1)));
  ASSERT_GRPC_OK(Unstage(image));
  auto removed = RunCommand(Ceph().Rbd({"snap", "rm", "--no-progress", Ceph().pool + "/" + image + "@s1"}), true);
  EXPECT_TRUE(removed.ok() && removed->exit.code == 0) << (removed.ok() ? removed->stdout_text : "");
}

}  // namespace
}  // namespace nbdk::vmtest
