// Benchmark (not a test): how often each of an idle nbdkeeperd's threads
// wakes up. The daemon starts with no volume and no systemd watchdog, waits
// for /readyz, settles, and every thread's context switches are counted over
// a window. The main thread is the event loop's; the rest are libuv's pool
// and gRPC's.
//
//   idle_bench [seconds]       default a 20 s window
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "test/bench/proc_figures.h"
#include "test/common/daemon_process.h"

int main(int argc, char** argv) {
  double window_s = argc > 1 ? std::atof(argv[1]) : 20;
  if (window_s <= 0) {
    std::fprintf(stderr, "idle_bench: the window must be a positive number of seconds\n");
    return 1;
  }
  char tmpl[] = "/tmp/nbdk-idle-bench-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  ::unsetenv("WATCHDOG_USEC");
  ::unsetenv("NOTIFY_SOCKET");
  int rc = 0;
  {
    nbdk::test::DaemonProcess daemon(NBDKEEPERD_PATH, dir);
    if (!daemon.Start() || !daemon.WaitReady(30000)) {
      std::fprintf(stderr, "idle_bench: the daemon did not become ready:\n%s", daemon.Log().c_str());
      rc = 1;
    } else {
      std::this_thread::sleep_for(std::chrono::seconds(2));
      double cpu0 = nbdk::bench::CpuSeconds(daemon.pid());
      auto threads = nbdk::bench::SampleThreadWakeups(daemon.pid(), window_s);
      double cpu = nbdk::bench::CpuSeconds(daemon.pid()) - cpu0;
      std::printf(
          "idle_bench: nbdkeeperd with no volume, wakeups per thread over %.0f s "
          "(main = the event loop)\n",
          window_s);
      nbdk::bench::PrintThreadWakeups(threads, "  ");
      std::printf("  CPU time in the window: %.3f s, RSS %.1f MiB\n", cpu, nbdk::bench::RssMiB(daemon.pid()));
      daemon.Stop(SIGTERM);
    }
  }
  std::filesystem::remove_all(dir);
  return rc;
}
