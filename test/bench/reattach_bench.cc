// Benchmark (not a test; run in the test VM): how long a kill -9 of rbd-nbd
// interrupts IO, side by side in one run:
//   bare      - `rbd-nbd attach` by hand right after the kill (no lock
//               break): the attach time is the floor for any healer;
//   keeper    - nbdkeeperd as shipped (lock break, 2 s queue timeout);
//   keeper 5s, 1s - the same with a 5 s and a 1 s queue timeout: IO in
//               flight at a death moves to the new connection at the first
//               queue-timeout tick after the re-attach, so the timeout
//               bounds the longest stall (docs/design/kernel-timeouts.md);
//   baseline  - nbdkeeperd with --break-dead-locks=false and the kernel's
//               30 s queue timeout: what a plain re-attach gives.
// For each: kill -> device re-attached, and the longest single write seen
// by an O_DIRECT|O_DSYNC writer on the volume (the IO stall). Then the
// price of a short queue timeout: every ceph-osd is paused (SIGSTOP) for
// 10 s under the writer, and the kernel's "Possible stuck request" lines
// are counted, during the kills and during the pause. Asserts nothing
// about time; exits non-zero only on IO errors or broken setup.
//
//   vm-exec -- build/test/reattach_bench [cycles] [baseline_cycles]
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string_view>
#include <thread>
#include <vector>

#include "base/command.h"
#include "csi/proto/csi.grpc.pb.h"
#include "test/bench/bench_figures.h"
#include "test/common/daemon_process.h"
#include "test/common/vm_command.h"
#include "test/common/vm_faults.h"
#include "test/common/vm_volume.h"

namespace {

using nbdk::bench::Clock;
using nbdk::bench::Die;
using nbdk::bench::Max;
using nbdk::bench::Median;
using nbdk::bench::Secs;
using nbdk::vmtest::RunCommand;
using nbdk::vmtest::SpawnedChild;
using nbdk::vmtest::VmCeph;
using nbdk::vmtest::Writer;

std::string Format(const char* format, double seconds, unsigned long long count) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, seconds, count);
  return buf;
}

void CreateImage(const VmCeph& c, const std::string& name) {
  if (auto st = nbdk::vmtest::CreateImage(c, name, 64); !st.ok()) Die(st.ToString());
}

// kill -9 + `rbd-nbd attach` by hand: the bare attach time per cycle.
std::vector<double> BareAttach(const VmCeph& c, int cycles) {
  CreateImage(c, "bench-bare");
  std::vector<std::string> common = {
      "--try-netlink", "--reattach-timeout", "60",     "--cookie", "bench-bare-cookie", "-c", c.conf, "--id",
      c.user,          "--keyfile",          c.keyfile};
  std::vector<std::string> map = {"rbd-nbd", "map", "-f"};
  map.insert(map.end(), common.begin(), common.end());
  map.push_back(c.pool + "/bench-bare");
  auto child = SpawnedChild::Spawn(map);
  if (!child.ok()) Die(child.status().ToString());
  auto device = child->ReadLine(std::chrono::seconds(60));
  if (!device.ok()) Die("bare map: " + device.status().ToString());
  std::string dev = device->substr(0, device->find(' '));
  std::vector<double> times;
  std::vector<SpawnedChild> servers;
  servers.push_back(std::move(*child));
  for (int i = 0; i < cycles; ++i) {
    ::kill(servers.back().pid(), SIGKILL);
    (void)servers.back().Wait(std::chrono::seconds(10));
    auto t0 = Clock::now();
    std::vector<std::string> attach = {"rbd-nbd", "attach", "-f", "--device", dev};
    attach.insert(attach.end(), common.begin(), common.end());
    attach.push_back(c.pool + "/bench-bare");
    auto next = SpawnedChild::Spawn(attach);
    if (!next.ok()) Die(next.status().ToString());
    auto line = next->ReadLine(std::chrono::seconds(120));
    if (!line.ok()) Die("bare attach: " + line.status().ToString());
    times.push_back(Secs(Clock::now() - t0));
    servers.push_back(std::move(*next));
  }
  (void)RunCommand({"rbd-nbd", "unmap", dev});
  return times;
}

struct KeeperRun {
  std::vector<double> reattach_s;
  std::vector<double> stall_s;               // per kill: the longest write around it
  std::vector<double> after_s;               // per kill: stall - re-attach, the wait for a tick
  double pause_stall_s = 0;                  // longest write across the OSD pause (-1: not run)
  uint64_t kill_lines = 0, pause_lines = 0;  // "Possible stuck request" lines
  uint64_t errors = 0, writes = 0;
  bool laggy = false;  // the OSD stop left the one-OSD cluster's PGs laggy (cleared)
};

// Counts the kernel log records containing `what` written since it was
// created (or since the last Count()): /dev/kmsg read from its end.
class KernelLines {
 public:
  KernelLines() : fd_(::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC)) {
    if (fd_ < 0) Die("open /dev/kmsg");
    ::lseek(fd_, 0, SEEK_END);
  }
  ~KernelLines() { ::close(fd_); }
  uint64_t Count(const std::string& what) {
    uint64_t n = 0;
    char record[8192];
    for (;;) {
      ssize_t r = ::read(fd_, record, sizeof record);
      if (r < 0 && errno == EPIPE) continue;  // overwritten records: skipped
      if (r <= 0) return n;
      if (std::string_view(record, static_cast<size_t>(r)).find(what) != std::string_view::npos) ++n;
    }
  }

 private:
  int fd_;
};

constexpr const char* kStuckLine = "Possible stuck request";

// Every ceph-osd stopped for `seconds`, then continued.
void PauseOsds(int seconds) {
  auto pgrep = RunCommand({"pgrep", "-x", "ceph-osd"});
  if (!pgrep.ok() || pgrep->exit.code != 0) Die("no ceph-osd to pause");
  std::vector<std::string> stop = {"kill", "-STOP"}, cont = {"kill", "-CONT"};
  std::istringstream lines(pgrep->stdout_text);
  for (std::string pid; std::getline(lines, pid);) {
    stop.push_back(pid);
    cont.push_back(pid);
  }
  auto stopped = RunCommand(stop);
  if (!stopped.ok() || stopped->exit.code != 0) Die("kill -STOP ceph-osd");
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  auto continued = RunCommand(cont);
  if (!continued.ok() || continued->exit.code != 0) Die("kill -CONT ceph-osd");
}

KeeperRun Keeper(const VmCeph& c, const std::string& image, int cycles, std::vector<std::string> flags,
                 bool pause_osds) {
  std::string root = "/run/nbdk-bench-" + image;
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root + "/staging");
  if (auto st = nbdk::vmtest::WriteCephCsiConfig(root + "/config.json", "bench", c); !st.ok()) Die(st.ToString());
  nbdk::test::DaemonProcess daemon(NBDKEEPERD_PATH, root);
  flags.insert(flags.end(), {"--ceph-csi-config=" + root + "/config.json", "--ceph-conf=" + c.conf,
                             "--key-dir=" + root + "/keys", "--reattach-timeout=120"});
  if (!daemon.Start(flags)) Die("daemon did not start:\n" + daemon.Log());
  if (!daemon.WaitReady(60000)) Die("daemon not ready:\n" + daemon.Log());
  auto node = csi::v1::Node::NewStub(grpc::CreateChannel(daemon.endpoint(), grpc::InsecureChannelCredentials()));
  CreateImage(c, image);
  grpc::ClientContext ctx;
  csi::v1::NodeStageVolumeResponse resp;
  grpc::Status st =
      node->NodeStageVolume(&ctx, nbdk::vmtest::StageRequest(c, "bench", image, root + "/staging"), &resp);
  if (!st.ok()) Die("stage: " + st.error_message() + "\n" + daemon.Log());

  KeeperRun run;
  {
    auto started = Writer::Start(root + "/staging/" + image + "/data");
    if (!started.ok()) Die(started.status().ToString());
    Writer& writer = **started;
    std::this_thread::sleep_for(std::chrono::seconds(2));
    KernelLines kernel;
    for (int i = 1; i <= cycles; ++i) {
      writer.ResetLongest();
      auto before = nbdk::vmtest::GetVolumeStatus(daemon.health_port(), image);
      if (!before || before->pid <= 0) Die("no pid in /status");
      auto t0 = Clock::now();
      ::kill(before->pid, SIGKILL);
      for (;;) {
        auto now = nbdk::vmtest::GetVolumeStatus(daemon.health_port(), image);
        if (now && now->restarts == static_cast<uint64_t>(i) && now->state == "Connected") break;
        if (Clock::now() - t0 > std::chrono::seconds(180)) Die("no re-attach in 180 s:\n" + daemon.Log());
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      run.reattach_s.push_back(Secs(Clock::now() - t0));
      // Let the writer show its stall before the next kill.
      auto writes = writer.writes();
      while (writer.writes() < writes + 50 && Clock::now() - t0 < std::chrono::seconds(120)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      run.stall_s.push_back(writer.longest_s());
      run.after_s.push_back(std::max(0.0, run.stall_s.back() - run.reattach_s.back()));
      std::printf("  %-12s cycle %d: re-attached after %.2f s, longest write %.2f s\n", image.c_str(), i,
                  run.reattach_s.back(), run.stall_s.back());
      std::fflush(stdout);
    }
    run.kill_lines = kernel.Count(kStuckLine);
    run.pause_stall_s = -1;
    if (pause_osds) {
      writer.ResetLongest();
      auto writes = writer.writes();
      PauseOsds(10);
      auto t0 = Clock::now();
      bool laggy_cleared = false;
      while (writer.writes() < writes + 50) {
        if (Clock::now() - t0 > std::chrono::seconds(90) && !laggy_cleared) {
          // The one-OSD cluster's PGs can latch laggy after a pause (Ceph;
          // docs/design/kernel-timeouts.md): say so, clear it, and go on.
          auto status = nbdk::vmtest::GetVolumeStatus(daemon.health_port(), image);
          nbdk::faults::PrintStalledDevice(status ? status->device : "");
          laggy_cleared = nbdk::faults::RecoverLaggyPgs();
          if (!laggy_cleared) Die("IO did not resume 90 s after the OSDs continued:\n" + daemon.Log());
          run.laggy = true;
        }
        if (Clock::now() - t0 > std::chrono::seconds(210)) {
          Die("IO did not resume after the laggy PGs were cleared:\n" + daemon.Log());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      run.pause_stall_s = writer.longest_s();
      run.pause_lines = kernel.Count(kStuckLine);
    }
    writer.Stop();
    run.errors = writer.errors();
    run.writes = writer.writes();
  }
  csi::v1::NodeUnstageVolumeRequest un;
  un.set_volume_id(image);
  un.set_staging_target_path(root + "/staging");
  grpc::ClientContext uctx;
  csi::v1::NodeUnstageVolumeResponse uresp;
  st = node->NodeUnstageVolume(&uctx, un, &uresp);
  if (!st.ok()) Die("unstage: " + st.error_message());
  daemon.Stop(SIGTERM);
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  int cycles = argc > 1 ? std::atoi(argv[1]) : 10;
  int baseline_cycles = argc > 2 ? std::atoi(argv[2]) : 2;
  VmCeph c = VmCeph::FromEnv();
  if (!c.complete()) Die("run inside the test VM (CEPH_CONF, NBDK_CEPH_* unset)");
  std::printf("reattach_bench: %d kill -9 cycles (baseline: %d), ext4, O_DIRECT|O_DSYNC 4 KiB writer\n", cycles,
              baseline_cycles);
  std::vector<double> bare = BareAttach(c, cycles);
  std::printf("  bare     rbd-nbd attach: median %.2f s, max %.2f s\n", Median(bare), Max(bare));
  KeeperRun five = Keeper(c, "bench-5s", cycles, {"--io-timeout-ms=5000"}, true);
  KeeperRun keeper = Keeper(c, "bench-keeper", cycles, {}, true);
  KeeperRun fast = Keeper(c, "bench-fast", cycles, {"--io-timeout-ms=1000"}, true);
  KeeperRun baseline =
      Keeper(c, "bench-base", baseline_cycles, {"--break-dead-locks=false", "--io-timeout-ms=30000"}, true);

  double b = Median(bare);
  std::printf("\n%-44s %9s %7s %9s %15s %11s %9s %13s %6s\n", "", "kill->att", "/bare", "stall", "max stall /bare",
              "after att", "stuck", "10 s OSD stop", "errors");
  std::printf("%-44s %8.2fs %7s\n", "bare rbd-nbd attach (no lock break)", b, "1.00x");
  auto row = [&](const char* name, const KeeperRun& r) {
    std::string pause = r.pause_stall_s < 0
                            ? "-"
                            : Format("%.2fs %llu", r.pause_stall_s, static_cast<unsigned long long>(r.pause_lines));
    if (r.laggy) pause += " laggy";
    std::printf("%-44s %8.2fs %6.2fx %8.2fs %8.2fs %5.2fx %4.2f/%4.2fs %9llu %13s %6llu\n", name, Median(r.reattach_s),
                Median(r.reattach_s) / b, Median(r.stall_s), Max(r.stall_s), Max(r.stall_s) / b, Median(r.after_s),
                Max(r.after_s), static_cast<unsigned long long>(r.kill_lines), pause.c_str(),
                static_cast<unsigned long long>(r.errors));
  };
  row("nbdkeeper (lock break, 5 s queue timeout)", five);
  row("nbdkeeper as shipped (lock break, 2 s)", keeper);
  row("nbdkeeper (lock break, 1 s queue timeout)", fast);
  row("nbdkeeper, no lock break, 30 s queue timeout", baseline);
  std::printf(
      "kill->att, stall: medians over the kills; after att: the longest write minus the re-attach time\n"
      "(median/max), the wait for the queue-timeout tick; stuck: the kernel's \"%s\" lines\n"
      "during the kills; 10 s OSD stop: the longest write and those lines while every ceph-osd was stopped\n"
      "(laggy: the one-OSD cluster's PGs latched laggy and were cleared, docs/design/kernel-timeouts.md)\n",
      kStuckLine);
  uint64_t errors = five.errors + keeper.errors + fast.errors + baseline.errors;
  std::printf("writes: %llu + %llu + %llu + %llu, IO errors: %llu\n", static_cast<unsigned long long>(five.writes),
              static_cast<unsigned long long>(keeper.writes), static_cast<unsigned long long>(fast.writes),
              static_cast<unsigned long long>(baseline.writes), static_cast<unsigned long long>(errors));
  return errors == 0 ? 0 : 1;
}
