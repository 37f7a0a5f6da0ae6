// Healing after the daemon's own death (csi/heal/volume_healer.h), on the real
// kernel nbd driver, real rbd-nbd and Ceph (runs in the test VM). Three
// volumes - ext4, xfs, block - staged, published and written to by an
// O_DIRECT writer each while:
//  (a) nbdkeeperd is SIGKILLed and restarted: every rbd-nbd is adopted,
//      same pids, no writer error; NodeUnstage of a published volume is
//      still refused (FAILED_PRECONDITION naming the target);
//  (b) nbdkeeperd and every rbd-nbd are SIGKILLed, the daemon restarted:
//      every volume is re-attached on its own device, no writer error,
//      every block written reads back;
//  (c) with --reattach-timeout=10, both are SIGKILLed, the window passes
//      and a read fails with EIO before the restart: the volumes are
//      Expired (abnormal VolumeCondition), and unpublish + unstage still
//      leave nothing behind.
// Prints each heal time (daemon start -> /readyz 200) and the longest
// writer stall.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "test/csi/node_vm_fixture.h"

namespace nbdk::vmtest {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kBlock = 4096;
constexpr uint64_t kBlocks = 256;  // the writer cycles over the first 1 MiB

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// O_DIRECT|O_DSYNC writes of numbered 4 KiB blocks, each read back and
// compared, on a thread of its own. O_CLOEXEC: a daemon started meanwhile
// must not inherit the file and keep the mount busy. Its state is shared with the thread so
// a thread stuck in IO on an expired device can be left behind.
class Writer {
 public:
  explicit Writer(std::string path) : s_(std::make_shared<State>()) {
    s_->path = std::move(path);
    std::thread([s = s_] { Loop(*s); }).detach();
  }
  ~Writer() { Stop(30); }
  // Stops the loop; false if the thread did not finish within `seconds`.
  bool Stop(int seconds) {
    s_->stop = true;
    auto until = Clock::now() + std::chrono::seconds(seconds);
    while (!s_->finished && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return s_->finished;
  }
  uint64_t errors() const { return s_->errors; }
  uint64_t writes() const { return s_->writes; }
  double longest_stall_s() const { return s_->longest_us / 1e6; }
  void ResetStall() { s_->longest_us = 0; }
  std::string first_error() const {
    std::lock_guard<std::mutex> l(s_->mu);
    return s_->first_error;
  }
  // Reads every block written so far and compares it (after Stop).
  uint64_t VerifyAll() const {
    int fd = ::open(s_->path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd < 0) return kBlocks;
    void* buf = nullptr;
    (void)posix_memalign(&buf, kBlock, kBlock);
    uint64_t bad = 0;
    for (uint64_t b = 0; b < kBlocks && b < s_->writes; ++b) {
      if (::pread(fd, buf, kBlock, static_cast<off_t>(b * kBlock)) != static_cast<ssize_t>(kBlock) ||
          std::memcmp(buf, s_->expected[b].data(), kBlock) != 0) {
        ++bad;
      }
    }
    free(buf);
    ::close(fd);
    return bad;
  }

 private:
  struct State {
    std::string path;
    std::atomic<bool> stop{false}, finished{false};
    std::atomic<uint64_t> writes{0}, errors{0}, longest_us{0};
    std::vector<std::string> expected = std::vector<std::string>(kBlocks);
    mutable std::mutex mu;
    std::string first_error;
    void Error(const std::string& what) {
      if (errors++ == 0) {
        std::lock_guard<std::mutex> l(mu);
        first_error = what + ": " + std::strerror(errno);
      }
    }
  };

  static void Loop(State& s) {
    int fd = ::open(s.path.c_str(), O_RDWR | O_CREAT | O_DIRECT | O_DSYNC | O_CLOEXEC, 0644);
    void *out = nullptr, *in = nullptr;
    (void)posix_memalign(&out, kBlock, kBlock);
    (void)posix_memalign(&in, kBlock, kBlock);
    if (fd < 0) s.Error("open " + s.path);
    for (uint64_t seq = 0; fd >= 0 && !s.stop; ++seq) {
      uint64_t block = seq % kBlocks;
      std::snprintf(static_cast<char*>(out), kBlock, "%s block %llu seq %llu", s.path.c_str(),
                    static_cast<unsigned long long>(block), static_cast<unsigned long long>(seq));
      std::memset(static_cast<char*>(out) + 200, static_cast<int>('a' + seq % 26), kBlock - 200);
      auto t0 = Clock::now();
      off_t off = static_cast<off_t>(block * kBlock);
      if (::pwrite(fd, out, kBlock, off) != static_cast<ssize_t>(kBlock)) {
        s.Error("write");
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      if (::pread(fd, in, kBlock, off) != static_cast<ssize_t>(kBlock)) {
        s.Error("read back");
      } else if (std::memcmp(in, out, kBlock) != 0) {
        errno = 0;
        s.Error("block " + std::to_string(block) + " read back differs");
      } else {
        s.expected[block].assign(static_cast<char*>(out), kBlock);
        ++s.writes;
      }
      uint64_t us =
          static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count());
      if (us > s.longest_us) s.longest_us = us;
    }
    if (fd >= 0) ::close(fd);
    free(out);
    free(in);
    s.finished = true;
  }

  std::shared_ptr<State> s_;
};

struct Volume {
  std::string id;
  csi::v1::VolumeCapability cap;
  std::string target;
  std::unique_ptr<Writer> writer;
  std::string device;
  int pid = 0;
};

class HealVmTest : public NodeVmTest {
 protected:
  // Restarts the shared daemon with `reattach_timeout_s` (its old process,
  // if alive, is SIGKILLed) and returns the seconds from launch to /readyz.
  static double TimedRestart(int reattach_timeout_s) {
    Daemon().Stop(SIGKILL);
    auto t0 = Clock::now();
    RestartDaemon(reattach_timeout_s);
    return Seconds(Clock::now() - t0);
  }

  std::vector<Volume> StageAndPublish(const std::string& prefix) {
    std::vector<Volume> vols(3);
    vols[0].id = prefix + "-ext4";
    vols[0].cap = MountCap("ext4");
    vols[1].id = prefix + "-xfs";
    vols[1].cap = MountCap("xfs");
    vols[2].id = prefix + "-block";
    vols[2].cap = BlockCap();
    for (Volume& v : vols) {
      CreateImage(v.id, v.id.ends_with("-xfs") ? 320 : 64);  // mkfs.xfs refuses < 300 MiB
      EXPECT_GRPC_OK(Stage(StageReq(v.id, v.cap)));
      v.target = TargetPath(v.id, 1);
      EXPECT_GRPC_OK(Publish(v.id, v.target, v.cap));
      v.writer = std::make_unique<Writer>(v.cap.has_block() ? v.target : v.target + "/writer.dat");
      v.device = StatusField(v.id, "device");
      v.pid = std::atoi(StatusField(v.id, "pid").c_str());
      EXPECT_FALSE(v.device.empty()) << StatusOf(v.id);
    }
    WaitForWrites(vols);
    return vols;
  }

  // Waits until every writer completed `more` more writes.
  static void WaitForWrites(const std::vector<Volume>& vols, uint64_t more = 20) {
    for (const Volume& v : vols) {
      uint64_t want = v.writer->writes() + more;
      auto until = Clock::now() + std::chrono::seconds(60);
      while (v.writer->writes() < want && v.writer->errors() == 0 && Clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      EXPECT_GE(v.writer->writes(), want) << v.id << " writer stalled: " << v.writer->first_error();
    }
  }

  // By the pids seen while the daemon was up (it is dead by now).
  static void KillRbdNbd(const std::vector<Volume>& vols) {
    for (const Volume& v : vols) {
      ASSERT_GT(v.pid, 0) << v.id;
      ASSERT_EQ(::kill(v.pid, SIGKILL), 0) << v.id << " pid " << v.pid;
    }
  }

  void UnpublishAndUnstage(std::vector<Volume>& vols) {
    for (Volume& v : vols) {
      EXPECT_GRPC_OK(Unpublish(v.id, v.target));
      EXPECT_GRPC_OK(Unstage(v.id));
      EXPECT_FALSE(IsMounted(v.target)) << v.id;
      EXPECT_FALSE(IsMounted(StagingPath(v.id) + "/" + v.id)) << v.id;
      EXPECT_EQ(RbdNbdProcessesFor(v.id), 0) << v.id;
      EXPECT_EQ(StatusOf(v.id), "") << v.id << " is still known to the daemon";
      std::string backend = "/sys/block/" + v.device.substr(5) + "/backend";
      EXPECT_FALSE(std::filesystem::exists(backend)) << v.device << " is still configured";
    }
  }

  // The daemon's own figure: its last "healed" line's ms (journal loaded ->
  // every volume healed), beside the launch -> /readyz time measured here.
  static std::string HealedMs() {
    std::string log = Daemon().Log();
    size_t at = log.rfind("event=healed");
    if (at == std::string::npos) return "?";
    size_t ms = log.find(" ms=", at);
    return ms == std::string::npos ? "?" : log.substr(ms + 4, log.find('\n', ms) - ms - 4);
  }

  static void Print(const char* what, double heal_s, const std::vector<Volume>& vols) {
    double stall = 0;
    for (const Volume& v : vols) stall = std::max(stall, v.writer->longest_stall_s());
    std::printf("[heal] %-44s launch->ready %.2f s (healing itself %s ms), longest writer stall %.2f s\n", what, heal_s,
                HealedMs().c_str(), stall);
    std::fflush(stdout);
  }
};

TEST_F(HealVmTest, AdoptsAfterDaemonKillAndReattachesAfterDaemonAndRbdNbdKill) {
  std::vector<Volume> vols = StageAndPublish("heal-ab");
  ASSERT_FALSE(HasFailure());

  // (a) The daemon alone dies: its rbd-nbd children serve on, and are adopted.
  for (Volume& v : vols) v.writer->ResetStall();
  double heal_a = TimedRestart(60);
  for (const Volume& v : vols) {
    EXPECT_EQ(StatusField(v.id, "state"), "Connected") << StatusOf(v.id);
    EXPECT_EQ(StatusField(v.id, "adopted"), "true") << StatusOf(v.id);
    EXPECT_EQ(std::atoi(StatusField(v.id, "pid").c_str()), v.pid) << v.id;
    EXPECT_EQ(RbdNbdProcessesFor(v.id), 1) << v.id;
    grpc::Status st = Unstage(v.id);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << v.id << ": " << st.error_message();
    EXPECT_NE(st.error_message().find(v.target), std::string::npos) << st.error_message();
  }
  WaitForWrites(vols);
  Print("(a) daemon SIGKILL -> adopt", heal_a, vols);

  // (b) The daemon and every rbd-nbd die: the restarted daemon re-attaches.
  for (Volume& v : vols) v.writer->ResetStall();
  Daemon().Stop(SIGKILL);
  KillRbdNbd(vols);
  double heal_b = TimedRestart(60);
  for (const Volume& v : vols) {
    EXPECT_EQ(StatusField(v.id, "state"), "Connected") << StatusOf(v.id);
    EXPECT_EQ(StatusField(v.id, "device"), v.device) << v.id;
    EXPECT_EQ(StatusField(v.id, "adopted"), "false") << StatusOf(v.id);
    EXPECT_NE(std::atoi(StatusField(v.id, "pid").c_str()), v.pid) << v.id;
    grpc::Status st;
    auto stats = Stats(v.id, v.target, &st);
    EXPECT_TRUE(st.ok()) << st.error_message();
    EXPECT_FALSE(stats.volume_condition().abnormal()) << stats.volume_condition().message();
  }
  WaitForWrites(vols);
  Print("(b) daemon + rbd-nbd SIGKILL -> re-attach", heal_b, vols);

  for (Volume& v : vols) {
    EXPECT_TRUE(v.writer->Stop(30)) << v.id;
    EXPECT_EQ(v.writer->errors(), 0u) << v.id << ": " << v.writer->first_error();
    EXPECT_EQ(v.writer->VerifyAll(), 0u) << v.id << ": blocks that do not read back";
  }
  UnpublishAndUnstage(vols);
  if (HasFailure()) std::fprintf(stderr, "--- nbdkeeperd log ---\n%s\n", Daemon().Log().c_str());
}

// Past the window the kernel fails NEW IO with EIO, but IO in flight at
// the kill stays queued (measured: a running writer hangs, nothing fails,
// and a late re-attach resumes it - healing then rightly re-attaches). So
// the writers stop before the kill, and after the window one fresh read per
// device meets the kernel's EIO: that failed IO is what makes a re-attach
// unsafe, and what the healer detects.
TEST_F(HealVmTest, PastTheReattachWindowVolumesAreExpiredAndStillUnstage) {
  TimedRestart(10);  // the flag's minimum; the maps below get it too
  std::vector<Volume> vols = StageAndPublish("heal-c");
  ASSERT_FALSE(HasFailure());
  for (Volume& v : vols) {
    EXPECT_TRUE(v.writer->Stop(30)) << v.id;
    EXPECT_EQ(v.writer->errors(), 0u) << v.id << ": " << v.writer->first_error();
  }
  Daemon().Stop(SIGKILL);
  KillRbdNbd(vols);
  std::this_thread::sleep_for(std::chrono::seconds(12));
  std::vector<std::future<int>> reads;
  for (const Volume& v : vols) {
    reads.push_back(std::async(std::launch::async, [device = v.device] {
      int fd = ::open(device.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
      if (fd < 0) return errno;
      void* buf = nullptr;
      (void)posix_memalign(&buf, kBlock, kBlock);
      int err = ::pread(fd, buf, kBlock, 0) < 0 ? errno : 0;
      free(buf);
      ::close(fd);
      return err;
    }));
  }
  for (size_t i = 0; i < vols.size(); ++i) {
    ASSERT_EQ(reads[i].wait_for(std::chrono::seconds(60)), std::future_status::ready) << vols[i].device;
    EXPECT_EQ(reads[i].get(), EIO) << vols[i].device << ": a read past the window should fail with EIO";
  }
  double heal_c = TimedRestart(10);
  for (const Volume& v : vols) {
    EXPECT_EQ(StatusField(v.id, "state"), "Expired") << StatusOf(v.id);
    grpc::Status st;
    auto stats = Stats(v.id, v.target, &st);
    EXPECT_TRUE(st.ok()) << st.error_message();
    EXPECT_TRUE(stats.volume_condition().abnormal());
    EXPECT_NE(stats.volume_condition().message().find("expired"), std::string::npos)
        << stats.volume_condition().message();
  }
  Print("(c) past the reattach window -> Expired", heal_c, vols);
  UnpublishAndUnstage(vols);
  TimedRestart(kReattachTimeoutS);  // back to the suite's settings
  if (HasFailure()) std::fprintf(stderr, "--- nbdkeeperd log ---\n%s\n", Daemon().Log().c_str());
}

}  // namespace
}  // namespace nbdk::vmtest
