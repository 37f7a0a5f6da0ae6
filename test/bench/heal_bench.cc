// Benchmark (not a test): nbdkeeperd start -> ready (GET /readyz 200) with
// 1, 8 and 32 journaled volumes, the journal written directly with
// NodeJournal into a fresh state dir. The host has no nbd, so half the
// records are from another boot (StaleBoot) and half name a device the
// kernel does not have (Expired): the start-up pays for the journal load,
// the /proc scan, sysfs reads, one journal write per Expired volume, and
// the gRPC and health servers.
//
//   heal_bench [runs]          default 5 runs per size; the median is shown
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "journal/node_boot_id.h"
#include "journal/node_journal.h"
#include "test/common/daemon_process.h"
#include "test/common/http_client.h"

namespace {

nbdk::VolumeRecord Record(int i, const std::string& boot_id) {
  nbdk::VolumeRecord r;
  r.volume_id = "bench-vol-" + std::to_string(i);
  r.cluster_id = "bench";
  r.monitors = {"127.0.0.1:6789"};
  r.pool = "rbd";
  r.image = "bench-img-" + std::to_string(i);
  r.user_id = "nbdk";
  r.keyfile_path = "/nonexistent/key";
  r.nbd_device = "/dev/nbd" + std::to_string(500 + i);  // no such device on the host
  r.cookie = r.volume_id;
  r.fs_type = "ext4";
  r.staging_path = "/nonexistent/staging";
  r.rbd_nbd_pid = 999999;
  r.boot_id = i % 2 == 0 ? boot_id : "00000000-0000-0000-0000-000000000000";
  r.reattach_timeout_s = 300;
  r.state = nbdk::VolumeState::kStaged;
  return r;
}

// Writes `volumes` records; the journal (and its LOCK) is closed on return,
// before the daemon opens it.
bool WriteJournal(const std::string& dir, int volumes, const std::string& boot_id) {
  std::filesystem::create_directories(dir + "/state");
  auto journal = nbdk::NodeJournal::Open(dir + "/state/journal");
  if (!journal.ok()) {
    std::fprintf(stderr, "journal: %s\n", journal.status().ToString().c_str());
    return false;
  }
  for (int i = 0; i < volumes; ++i) {
    if (auto s = journal->Put(Record(i, boot_id)); !s.ok()) {
      std::fprintf(stderr, "put: %s\n", s.ToString().c_str());
      return false;
    }
  }
  return true;
}

// Milliseconds from launch to /readyz 200; -1 on failure.
double StartToReady(const std::string& dir, int volumes, const std::string& boot_id, std::string* healed) {
  if (!WriteJournal(dir, volumes, boot_id)) return -1;
  nbdk::test::DaemonProcess daemon(NBDKEEPERD_PATH, dir);
  auto t0 = std::chrono::steady_clock::now();
  if (!daemon.Start()) {
    std::fprintf(stderr, "daemon failed to start:\n%s", daemon.Log().c_str());
    return -1;
  }
  while (nbdk::test::HttpGet(daemon.health_port(), "/readyz").status != 200) {
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(30)) {
      std::fprintf(stderr, "not ready after 30 s:\n%s", daemon.Log().c_str());
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  daemon.Stop(SIGTERM);
  // The daemon's own summary line, to show what the healing decided.
  std::string log = daemon.Log();
  size_t at = log.find("event=healed");
  if (at != std::string::npos) *healed = log.substr(at, log.find('\n', at) - at);
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  auto boot_id = nbdk::ReadBootId();
  if (!boot_id.ok()) {
    std::fprintf(stderr, "boot id: %s\n", boot_id.status().ToString().c_str());
    return 1;
  }
  std::printf("heal_bench: nbdkeeperd start -> /readyz 200, median of %d runs (min-max)\n", runs);
  std::printf("  %-8s %10s %18s\n", "volumes", "median ms", "range ms");
  for (int volumes : {0, 1, 8, 32}) {
    std::vector<double> ms;
    std::string healed;
    for (int run = 0; run < runs; ++run) {
      char tmpl[] = "/tmp/nbdk-heal-bench-XXXXXX";
      std::string dir = ::mkdtemp(tmpl);
      double t = StartToReady(dir, volumes, *boot_id, &healed);
      std::filesystem::remove_all(dir);
      if (t < 0) return 1;
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("  %-8d %10.1f %8.1f-%-8.1f  %s\n", volumes, ms[ms.size() / 2], ms.front(), ms.back(), healed.c_str());
  }
  return 0;
}
