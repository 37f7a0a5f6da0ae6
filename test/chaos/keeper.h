// The nbdkeeperd under test, across its incarnations: the chaos run kills
// and restarts it, and every counter in /metrics starts from zero in each
// new process, so what the daemon counted is judged per incarnation.
#pragma once

#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "csi/proto/csi.grpc.pb.h"
#include "test/common/daemon_process.h"
#include "test/common/vm_volume.h"

namespace nbdk::chaos {

// The supervisor counters of one /metrics scrape.
struct KeeperCounters {
  double deaths = 0, reattaches = 0, adoptions = 0, expirations = 0;
};

struct Incarnation {
  pid_t pid = 0;
  // What the chaos run did while this process ran, and so what it must
  // have counted.
  uint64_t child_deaths_injected = 0;
  uint64_t adoptions_expected = 0;  // volumes running when it started
  // Its own /metrics, scraped once every volume had healed, just before
  // it was stopped; nullopt if it did not answer.
  std::optional<KeeperCounters> counters;
  std::string ended_by;  // "SIGKILL", "SIGTERM" (a restart follows), "end" (the final SIGTERM)
  double cpu_s = 0;      // utime + stime, read from its zombie
  uint64_t max_rss_kib = 0;
  bool exit_ok = true;  // SIGTERM: exit status 0
};

class Keeper {
 public:
  // `root` holds the socket, state dir, key dir and log.
  Keeper(std::string root, vmtest::VmCeph ceph);

  // Starts a new incarnation; returns once /readyz answers 200.
  // `running_volumes` is how many staged volumes it should adopt.
  Status Start(uint64_t running_volumes);
  // Scrapes /metrics, sends `signum`, reads the CPU time from the zombie
  // and reaps it. `ended_by` labels the incarnation in the report.
  Status Stop(int signum, const std::string& ended_by);
  // Samples the daemon's RSS into the current incarnation; returns it (KiB).
  uint64_t SampleRss();

  csi::v1::Node::Stub& node() { return *node_; }
  int health_port() const { return daemon_.health_port(); }
  pid_t pid() const { return daemon_.pid(); }
  bool running() const { return daemon_.pid() > 0; }
  Incarnation& current() { return incarnations_.back(); }
  const std::vector<Incarnation>& incarnations() const { return incarnations_; }
  std::string key_dir() const { return root_ + "/keys"; }
  std::string journal_dir() const { return root_ + "/state/journal"; }
  std::string log_path() const { return daemon_.log_path(); }

 private:
  std::string root_;
  vmtest::VmCeph ceph_;
  test::DaemonProcess daemon_;
  std::unique_ptr<csi::v1::Node::Stub> node_;
  std::vector<Incarnation> incarnations_;
};

// One un-labelled sample of a Prometheus text page ("name value").
std::optional<double> MetricValue(const std::string& page, const std::string& name);

}  // namespace nbdk::chaos
