// Benchmark (not a test): CSI Probe round-trip latency through the real
// daemon, and the daemon's resident memory at idle.
//
//   probe_bench [calls]        default 2000 calls
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "csi/proto/csi.grpc.pb.h"
#include "test/common/daemon_process.h"

namespace {

long RssKib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * (v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  int calls = argc > 1 ? std::atoi(argv[1]) : 2000;
  char tmpl[] = "/tmp/nbdk-bench-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  nbdk::test::DaemonProcess daemon(NBDKEEPERD_PATH, dir);
  if (!daemon.Start()) {
    std::fprintf(stderr, "daemon failed to start:\n%s", daemon.Log().c_str());
    return 1;
  }
  long idle_rss = RssKib(daemon.pid());
  auto stub = csi::v1::Identity::NewStub(grpc::CreateChannel(daemon.endpoint(), grpc::InsecureChannelCredentials()));
  std::vector<double> us;
  us.reserve(calls);
  for (int i = 0; i < calls + 100; ++i) {
    grpc::ClientContext ctx;
    csi::v1::ProbeResponse resp;
    auto t0 = std::chrono::steady_clock::now();
    grpc::Status s = stub->Probe(&ctx, {}, &resp);
    auto t1 = std::chrono::steady_clock::now();
    if (!s.ok()) {
      std::fprintf(stderr, "Probe failed: %s\n", s.error_message().c_str());
      return 1;
    }
    if (i >= 100) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());  // 100 warm-up calls
  }
  long busy_rss = RssKib(daemon.pid());
  daemon.Stop(SIGTERM);
  std::filesystem::remove_all(dir);
  std::printf("probe_bench: %d Probe calls over the unix socket\n", calls);
  std::printf("  latency p50 %.0f us, p99 %.0f us, max %.0f us\n", Percentile(us, 0.5), Percentile(us, 0.99),
              Percentile(us, 1.0));
  std::printf("  daemon RSS at idle %ld KiB, after the calls %ld KiB\n", idle_rss, busy_rss);
  return 0;
}
