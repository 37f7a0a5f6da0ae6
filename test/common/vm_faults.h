// Test-only: the faults fault_suite injects inside the test VM, each undone
// by its destructor so that a failing case leaves the cluster whole (the
// VM tests share one VM): errors are exceptions, never an exit that would
// skip a destructor.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace nbdk::faults {

// Every process named `program` SIGSTOPped for this object's life;
// std::runtime_error when there is none. A Ceph program of the native
// cluster (under test/vm/with-cluster-faults.sh, NBDK_CLUSTER_FAULTS set)
// is stopped by the host, in the cluster's namespaces, on this request.
class Paused {
 public:
  explicit Paused(const std::string& program);
  ~Paused();
  Paused(const Paused&) = delete;
  Paused& operator=(const Paused&) = delete;

 private:
  std::string program_;
  std::string host_faults_dir_;  // the share directory of the host's requests, or ""
  std::vector<pid_t> pids_;
};

// The node cut off from the cluster for this object's life: iptables drops
// every packet to the monitor's (3300, 6789) and the OSDs' (6800-7300)
// ports, on loopback (a Ceph of the guest's own) and on the link to the
// native cluster alike. All rules or none: std::runtime_error naming the
// failure.
class Partition {
 public:
  Partition();
  ~Partition();
  Partition(const Partition&) = delete;
  Partition& operator=(const Partition&) = delete;
};

// test/vm/nbd-io-report.sh for `device` ("/dev/nbdN"), to stderr.
void PrintStalledDevice(const std::string& device);

// A one-OSD pool's PGs can latch "laggy" after the OSD was paused past its
// read lease, parking every op in waiting_for_readable until the next
// interval change (Ceph, see docs/design/kernel-timeouts.md). With a Ceph
// of the guest's own (one OSD: a VM booted without the native cluster, as
// vm-run does): if its OSD holds an op "waiting for readable", marks osd.0
// down - it re-asserts itself at once, a new interval - and returns true.
// False when none does, and always on the native cluster (three OSDs; no
// OSD socket in the guest), where a stall is then reported as it is.
bool RecoverLaggyPgs();

}  // namespace nbdk::faults
