// Benchmark (not a test; run in the test VM): how long a kill -9 of rbd-nbd
// interrupts IO, side by side in one run:
//   bare      - `rbd-nbd attach` by hand right after the kill (no lock
//               break): the attach time is the floor for any healer;
//   keeper    - nbdkeeperd as shipped (lock break, 5 s queue timeout);
//   keeper 1s - the same with a 1 s queue timeout: IO in flight at a death
//               moves to the new connection at the first queue-timeout
//               tick after the re-attach, so this bounds the longest stall;
//   baseline  - nbdkeeperd with --break-dead-locks=false and the kernel's
//               30 s queue timeout: what a plain re-attach gives.
// For each: kill -> device re-attached, and the longest single write seen
// by an O_DIRECT|O_DSYNC writer on the volume (the IO stall). Asserts
// nothing about time; exits non-zero only on IO errors or broken setup.
//
//   vm-exec -- build/test/reattach_bench [cycles] [baseline_cycles]
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

#include "csi/proto/csi.grpc.pb.h"
#include "test/bench/bench_figures.h"
#include "test/common/daemon_process.h"
#include "test/common/vm_command.h"
#include "test/common/vm_volume.h"

namespace {

using nbdk::bench::Clock;
using nbdk::vmtest::RunCommand;
using nbdk::vmtest::SpawnedChild;
using nbdk::vmtest::VmCeph;
using nbdk::vmtest::Writer;
using nbdk::bench::Die;
using nbdk::bench::Max;
using nbdk::bench::Median;
using nbdk::bench::Secs;

void CreateImage(const VmCeph& c, const std::string& name) {
  if (auto st = nbdk::vmtest::CreateImage(c, name, 64); !st.ok()) Die(st.ToString());
}

// kill -9 + `rbd-nbd attach` by hand: the bare attach time per cycle.
std::vector<double> BareAttach(const VmCeph& c, int cycles) {
  CreateImage(c, "bench-bare");
  std::vector<std::string> common = {"--try-netlink", "--reattach-timeout", "60", "--cookie", "bench-bare-cookie",
                                     "-c", c.conf, "--id", c.user, "--keyfile", c.keyfile};
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
  double longest_stall_s = 0;
  uint64_t errors = 0, writes = 0;
};

KeeperRun Keeper(const VmCeph& c, const std::string& image, int cycles, std::vector<std::string> flags) {
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
  grpc::Status st = node->NodeStageVolume(&ctx, nbdk::vmtest::StageRequest(c, "bench", image, root + "/staging"), &resp);
  if (!st.ok()) Die("stage: " + st.error_message() + "\n" + daemon.Log());

  KeeperRun run;
  {
    auto started = Writer::Start(root + "/staging/" + image + "/data");
    if (!started.ok()) Die(started.status().ToString());
    Writer& writer = **started;
    std::this_thread::sleep_for(std::chrono::seconds(2));
    writer.ResetLongest();
    for (int i = 1; i <= cycles; ++i) {
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
      std::printf("  %-8s cycle %d: re-attached after %.2f s, longest write so far %.2f s\n", image.c_str(), i,
                  run.reattach_s.back(), writer.longest_s());
      std::fflush(stdout);
    }
    writer.Stop();
    run.longest_stall_s = writer.longest_s();
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
  KeeperRun keeper = Keeper(c, "bench-keeper", cycles, {});
  KeeperRun fast = Keeper(c, "bench-fast", cycles, {"--io-timeout-ms=1000"});
  KeeperRun baseline = Keeper(c, "bench-base", baseline_cycles, {"--break-dead-locks=false", "--io-timeout-ms=30000"});

  double b = Median(bare);
  std::printf("\n%-44s %10s %10s %12s %14s %8s\n", "", "kill->att", "max", "/bare attach", "longest stall",
              "errors");
  std::printf("%-44s %9.2fs %9.2fs %12s %14s %8s\n", "bare rbd-nbd attach (no lock break)", b, Max(bare), "1.00x",
              "-", "-");
  auto row = [&](const char* name, const KeeperRun& r) {
    std::printf("%-44s %9.2fs %9.2fs %11.2fx %8.2fs %4.2fx %8llu\n", name, Median(r.reattach_s), Max(r.reattach_s),
                Median(r.reattach_s) / b, r.longest_stall_s, r.longest_stall_s / b,
                static_cast<unsigned long long>(r.errors));
  };
  row("nbdkeeper (lock break, 5 s queue timeout)", keeper);
  row("nbdkeeper (lock break, 1 s queue timeout)", fast);
  row("nbdkeeper, no lock break, 30 s queue timeout", baseline);
  uint64_t errors = keeper.errors + fast.errors + baseline.errors;
  std::printf("writes: %llu + %llu + %llu, IO errors: %llu\n", static_cast<unsigned long long>(keeper.writes),
              static_cast<unsigned long long>(fast.writes), static_cast<unsigned long long>(baseline.writes),
              static_cast<unsigned long long>(errors));
  return errors == 0 ? 0 : 1;
}
