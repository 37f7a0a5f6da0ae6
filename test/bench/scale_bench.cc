// Benchmark (not a test; run in the test VM with memory for N rbd-nbd):
// one nbdkeeperd with N ext4 volumes, each with an O_DIRECT|O_DSYNC writer,
// for each N given, and for each bound on concurrent attaches K given
// (--max-concurrent-attaches; several K share one N's volumes):
//   stage    - N NodeStageVolume calls issued at once: per volume and all
//              (under the first K);
//   memory   - the daemon's RSS and CPU time (children excluded), one
//              rbd-nbd's RSS;
//   mass heal - kill -9 of every rbd-nbd at once -> each volume Connected
//              again: median, slowest, all; the daemon's CPU in that window
//              against the new rbd-nbd processes' CPU and the VM's busy
//              CPU, and per daemon thread;
//   restart  - (unless --no-restart) SIGKILL of the daemon and every
//              rbd-nbd, a new daemon with this K on the same journal ->
//              every volume Connected;
// The next K starts with a planned daemon restart (SIGTERM: every rbd-nbd
// keeps serving and is adopted).
// with IO errors and the longest write over all writers in the K's two
// phases. A phase that does not heal every volume within --give-up-s is
// reported and ends the benchmark (its volumes expired; put no bound last).
// --write-interval-ms=M paces each writer (a pause of M ms after each
// write; default 0, flat out: the worst case for a 2-vCPU VM).
// --keep-logs=DIR copies each daemon's log to DIR/scale-<N>.log (in the VM,
// /run/nbdk-vm/share is the host's <state>/share).
// Asserts nothing about time; exits non-zero only on IO errors, unhealed
// volumes or broken setup.
//
//   NBDK_VM_MEM=6144 test/vm/vm-run --timeout 1800 -- $PWD/build/test/scale_bench 1 8 32
//   NBDK_VM_MEM=6144 test/vm/vm-run --timeout 1200 -- $PWD/build/test/scale_bench --k=16,8,4 --no-restart 32
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>
#include <vector>

#include "csi/proto/csi.grpc.pb.h"
#include "test/bench/bench_figures.h"
#include "test/bench/proc_figures.h"
#include "test/bench/scale_table.h"
#include "test/common/daemon_process.h"
#include "test/common/vm_volume.h"

namespace {

using nbdk::bench::Clock;
using nbdk::bench::CpuSeconds;
using nbdk::bench::Die;
using nbdk::bench::KName;
using nbdk::bench::Max;
using nbdk::bench::Median;
using nbdk::bench::PrintHeader;
using nbdk::bench::PrintLegend;
using nbdk::bench::PrintRow;
using nbdk::bench::RssMiB;
using nbdk::bench::ScaleRow;
using nbdk::bench::Secs;
using nbdk::vmtest::GetVolumeStatus;
using nbdk::vmtest::GetVolumeStatuses;
using nbdk::vmtest::VmCeph;
using nbdk::vmtest::Writer;

// Printed after the table.
nbdk::bench::ThreadFigures figures;

struct Volume {
  std::string image, staging;
  std::unique_ptr<Writer> writer;
};

class Node {
 public:
  Node(const VmCeph& ceph, int n) : ceph_(ceph), root_("/run/nbdk-scale-" + std::to_string(n)) {
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
    if (auto st = nbdk::vmtest::WriteCephCsiConfig(root_ + "/config.json", "scale", ceph); !st.ok()) {
      Die(st.ToString());
    }
    for (int i = 0; i < n; ++i) {
      Volume v{"scale-" + std::to_string(n) + "-" + std::to_string(i), root_ + "/staging-" + std::to_string(i), {}};
      std::filesystem::create_directories(v.staging);
      if (auto st = nbdk::vmtest::CreateImage(ceph, v.image, 32); !st.ok()) Die(st.ToString());
      volumes_.push_back(std::move(v));
    }
  }

  // `k` < 0: the daemon's default bound.
  void StartDaemon(int k) {
    daemon_ = std::make_unique<nbdk::test::DaemonProcess>(NBDKEEPERD_PATH, root_);
    std::vector<std::string> flags = {"--ceph-csi-config=" + root_ + "/config.json", "--ceph-conf=" + ceph_.conf,
                                      "--key-dir=" + root_ + "/keys"};
    if (k >= 0) flags.push_back("--max-concurrent-attaches=" + std::to_string(k));
    if (!daemon_->Start(flags)) Die("daemon did not start:\n" + daemon_->Log());
    if (!daemon_->WaitReady(300000)) Die("daemon not ready:\n" + daemon_->Log());
  }

  // Every volume staged by one thread each, all at once: per-volume times.
  std::vector<double> StageAll() {
    auto node = csi::v1::Node::NewStub(grpc::CreateChannel(daemon_->endpoint(), grpc::InsecureChannelCredentials()));
    std::vector<double> took(volumes_.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < volumes_.size(); ++i) {
      threads.emplace_back([&, i] {
        auto t0 = Clock::now();
        grpc::ClientContext ctx;
        csi::v1::NodeStageVolumeResponse resp;
        grpc::Status st = node->NodeStageVolume(
            &ctx, nbdk::vmtest::StageRequest(ceph_, "scale", volumes_[i].image, volumes_[i].staging), &resp);
        if (!st.ok()) Die("stage " + volumes_[i].image + ": " + st.error_message());
        took[i] = Secs(Clock::now() - t0);
      });
    }
    for (auto& t : threads) t.join();
    return took;
  }

  void StartWriters(int interval_ms) {
    for (Volume& v : volumes_) {
      auto w = Writer::Start(v.staging + "/" + v.image + "/data", interval_ms);
      if (!w.ok()) Die(w.status().ToString());
      v.writer = std::move(*w);
    }
  }

  std::vector<pid_t> ServerPids() const {
    std::vector<pid_t> pids;
    auto all = GetVolumeStatuses(daemon_->health_port());
    if (!all) Die("the daemon's /status did not answer");
    for (const Volume& v : volumes_) {
      auto s = all->find(v.image);
      if (s == all->end() || s->second.pid <= 0) Die("no pid for " + v.image);
      pids.push_back(s->second.pid);
    }
    return pids;
  }

  // Waits until every volume is Connected (adopted after a daemon restart).
  void WaitAllConnected() {
    auto t0 = Clock::now();
    for (const Volume& v : volumes_) {
      for (;;) {
        auto s = GetVolumeStatus(daemon_->health_port(), v.image);
        if (s && s->state == "Connected" && s->pid > 0) break;
        if (Clock::now() - t0 > std::chrono::seconds(120)) Die(v.image + " not Connected after a restart");
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  }

  // Waits until every volume is Connected with a pid not in `old`, at most
  // `give_up_s`; the time each one took from `t0`, -1 for those that did not.
  // `polls` counts the GET /status it made.
  std::vector<double> WaitAllReplaced(const std::vector<pid_t>& old, Clock::time_point t0, double give_up_s,
                                      int* polls = nullptr) {
    std::vector<double> took(volumes_.size(), -1);
    size_t left = volumes_.size();
    while (left > 0) {
      if (Secs(Clock::now() - t0) > give_up_s) return took;
      // One /status per round: a request per volume was most of the
      // daemon's CPU during a heal of 32 (its loop building /status).
      auto all = GetVolumeStatuses(daemon_->health_port());
      if (polls != nullptr) ++*polls;
      for (size_t i = 0; all && i < volumes_.size(); ++i) {
        if (took[i] >= 0) continue;
        auto s = all->find(volumes_[i].image);
        if (s != all->end() && s->second.state == "Connected" && s->second.pid > 0 && s->second.pid != old[i]) {
          took[i] = Secs(Clock::now() - t0);
          --left;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return took;
  }

  // The daemon's CPU seconds per GET /status with every volume listed,
  // over `n` requests: what the benchmark's own polling costs it.
  double StatusCpuSeconds(int n) {
    double before = CpuSeconds(daemon_->pid());
    for (int i = 0; i < n; ++i) (void)GetVolumeStatuses(daemon_->health_port());
    return (CpuSeconds(daemon_->pid()) - before) / n;
  }

  // Waits until every writer has written since the heal (its held write done).
  void WaitWritersMoving() {
    auto t0 = Clock::now();
    for (Volume& v : volumes_) {
      while (v.writer->blocked_s() > 0.5 && Clock::now() - t0 < std::chrono::seconds(120)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
  }

  void ResetWriters() {
    for (Volume& v : volumes_) v.writer->ResetLongest();
  }
  double LongestWrite() const {
    double m = 0;
    for (const Volume& v : volumes_) m = std::max(m, v.writer->longest_s());
    return m;
  }
  uint64_t Errors() const {
    uint64_t e = 0;
    for (const Volume& v : volumes_) e += v.writer->errors();
    return e;
  }

  void Teardown() {
    for (Volume& v : volumes_) v.writer->Stop();
    auto node = csi::v1::Node::NewStub(grpc::CreateChannel(daemon_->endpoint(), grpc::InsecureChannelCredentials()));
    for (Volume& v : volumes_) {
      csi::v1::NodeUnstageVolumeRequest un;
      un.set_volume_id(v.image);
      un.set_staging_target_path(v.staging);
      grpc::ClientContext ctx;
      csi::v1::NodeUnstageVolumeResponse resp;
      grpc::Status st = node->NodeUnstageVolume(&ctx, un, &resp);
      if (!st.ok()) std::fprintf(stderr, "unstage %s: %s\n", v.image.c_str(), st.error_message().c_str());
      (void)nbdk::vmtest::RemoveImage(ceph_, v.image);
    }
    daemon_->Stop(SIGTERM);
  }

  nbdk::test::DaemonProcess& daemon() { return *daemon_; }

  void KeepLog(const std::string& dir) const {
    if (dir.empty() || !daemon_) return;
    std::error_code ec;
    std::filesystem::copy_file(daemon_->log_path(), dir + "/scale-" + std::to_string(volumes_.size()) + ".log",
                               std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) std::fprintf(stderr, "keep the daemon's log in %s: %s\n", dir.c_str(), ec.message().c_str());
  }

 private:
  const VmCeph& ceph_;
  std::string root_;
  std::vector<Volume> volumes_;
  std::unique_ptr<nbdk::test::DaemonProcess> daemon_;
};

size_t CountUnhealed(const std::vector<double>& took) {
  return static_cast<size_t>(std::count(took.begin(), took.end(), -1.0));
}

// One N, a row per K (all on the same volumes); false on IO errors. A K
// that leaves volumes unhealed ends the benchmark (put no bound last).
bool Run(const VmCeph& ceph, int n, const std::vector<int>& ks, bool with_restart, double give_up_s,
         int write_interval_ms, const std::string& keep_logs) {
  ScaleRow stage;
  Node node(ceph, n);
  node.StartDaemon(ks.front());
  figures.wakeups.emplace_back("N=" + std::to_string(n) + ", no volume staged yet",
                               nbdk::bench::SampleThreadWakeups(node.daemon().pid(), figures.kWakeupWindowS));
  auto t0 = Clock::now();
  std::vector<double> staged = node.StageAll();
  stage.stage_all = Secs(Clock::now() - t0);
  stage.stage_median = Median(staged);
  stage.stage_max = Max(staged);
  node.StartWriters(write_interval_ms);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  figures.wakeups.emplace_back("N=" + std::to_string(n) + ", every volume staged, writers running",
                               nbdk::bench::SampleThreadWakeups(node.daemon().pid(), figures.kWakeupWindowS));
  std::vector<pid_t> pids = node.ServerPids();
  stage.daemon_rss = RssMiB(node.daemon().pid());
  stage.rbd_nbd_rss = RssMiB(pids[0]);
  bool first = true;
  uint64_t errors_before = 0;
  for (int k : ks) {
    ScaleRow r = first ? stage : ScaleRow{};
    r.n = n;
    r.k = k;
    if (!first) {
      // The next K: a planned daemon restart, every rbd-nbd adopted.
      node.daemon().Stop(SIGTERM);
      node.StartDaemon(k);
      node.WaitAllConnected();
    }
    first = false;
    node.ResetWriters();
    {
      pids = node.ServerPids();
      // Mass heal: every rbd-nbd killed at once.
      const double per_poll = node.StatusCpuSeconds(200);
      int polls = 0;
      double cpu_before = CpuSeconds(node.daemon().pid());
      double node_before = nbdk::bench::BusyCpuSeconds();
      auto threads_before = nbdk::bench::CpuSecondsByThreadName(node.daemon().pid());
      t0 = Clock::now();
      for (pid_t p : pids) ::kill(p, SIGKILL);
      std::vector<double> heal = node.WaitAllReplaced(pids, t0, give_up_s, &polls);
      r.heal_daemon_cpu = CpuSeconds(node.daemon().pid()) - cpu_before;
      r.heal_poll_cpu = polls * per_poll;
      r.heal_node_cpu = nbdk::bench::BusyCpuSeconds() - node_before;
      figures.heal_cpu.emplace_back(
          "N=" + std::to_string(n) + " K=" + KName(k) + ", " + std::to_string(polls) + " polls x " +
              std::to_string(static_cast<int>(per_poll * 1e6)) + " us",
          std::pair{threads_before, nbdk::bench::CpuSecondsByThreadName(node.daemon().pid())});
      r.unhealed = CountUnhealed(heal);
      r.heal_all = Max(heal);
      r.heal_median = Median(heal);
      r.heal_max = Max(heal);
      if (r.unhealed == 0) {
        pids = node.ServerPids();
        for (pid_t p : pids) r.heal_children_cpu += CpuSeconds(p);
        node.WaitWritersMoving();
      }
    }
    if (with_restart && r.unhealed == 0) {
      // The daemon and every child killed; a new daemon with this K on the
      // same journal.
      ::kill(node.daemon().pid(), SIGKILL);
      for (pid_t p : pids) ::kill(p, SIGKILL);
      t0 = Clock::now();
      node.daemon().Wait(10000);
      node.StartDaemon(k);
      std::vector<double> restarted = node.WaitAllReplaced(pids, t0, give_up_s);
      r.restart_all = Max(restarted);
      r.unhealed = CountUnhealed(restarted);
      if (r.unhealed == 0) {
        node.WaitWritersMoving();
        pids = node.ServerPids();
      }
    }
    r.longest_write = node.LongestWrite();
    r.errors = node.Errors() - errors_before;
    errors_before = node.Errors();
    PrintRow(r);
    if (r.unhealed > 0) {
      std::string log = node.daemon().Log();
      std::string tail = log.substr(log.size() - std::min<size_t>(log.size(), 6000));
      std::fprintf(stderr, "N=%d K=%s: %zu volume(s) not healed in %.0f s; the daemon's log ends:\n%s\n", n,
                   KName(k).c_str(), r.unhealed, give_up_s, tail.c_str());
      // Expired volumes may hold writers in IO that never returns: no
      // teardown, no further N.
      node.KeepLog(keep_logs);
      figures.Print();
      std::fflush(stderr);
      std::_Exit(2);
    }
  }
  node.Teardown();
  node.KeepLog(keep_logs);
  return node.Errors() == 0;
}

std::vector<int> ParseKs(const std::string& list) {
  std::vector<int> ks;
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    ks.push_back(item == "default" ? -1 : item == "inf" ? 0 : std::atoi(item.c_str()));
  }
  if (ks.empty()) Die("--k: a comma-separated list of numbers, inf (no bound) or default");
  return ks;
}

}  // namespace

int main(int argc, char** argv) {
  VmCeph ceph = VmCeph::FromEnv();
  if (!ceph.complete()) Die("run inside the test VM (CEPH_CONF, NBDK_CEPH_* unset)");
  std::vector<int> sizes;
  std::vector<int> ks = {-1};
  // Past the 300 s reattach window every unhealed volume has expired.
  double give_up_s = 320;
  bool with_restart = true;
  int write_interval_ms = 0;  // flat out
  std::string keep_logs;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--k=", 0) == 0) {
      ks = ParseKs(arg.substr(4));
    } else if (arg == "--no-restart") {
      with_restart = false;
    } else if (arg.rfind("--keep-logs=", 0) == 0) {
      keep_logs = arg.substr(12);
    } else if (arg.rfind("--write-interval-ms=", 0) == 0) {
      write_interval_ms = std::atoi(arg.c_str() + 20);
    } else if (arg.rfind("--give-up-s=", 0) == 0) {
      give_up_s = std::atof(arg.c_str() + 12);
    } else {
      sizes.push_back(std::atoi(arg.c_str()));
    }
  }
  if (sizes.empty()) sizes = {1, 8, 32};
  PrintHeader();
  std::fflush(stdout);
  bool ok = true;
  for (int n : sizes) ok = Run(ceph, n, ks, with_restart, give_up_s, write_interval_ms, keep_logs) && ok;
  PrintLegend();
  figures.Print();
  return ok ? 0 : 1;
}
