#include "test/common/vm_faults.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "test/common/vm_command.h"
#include "test/common/vm_volume.h"

namespace nbdk::faults {
namespace {

using vmtest::RunCommand;

// On every link: the guest's own Ceph listens on lo, the native cluster
// beyond the guest's one network device.
const std::vector<std::vector<std::string>> kDropRules = {
    {"-p", "tcp", "--dport", "3300", "-j", "DROP"},
    {"-p", "tcp", "--dport", "6789", "-j", "DROP"},
    {"-p", "tcp", "--dport", "6800:7300", "-j", "DROP"},
};

// "STOP|CONT <program>" asked of test/vm/with-cluster-faults.sh through the
// share directory `dir`; its answer, within 30 s.
void AskHost(const std::string& dir, const std::string& request) {
  static int sequence = 0;
  const std::string base = dir + "/" + std::to_string(::getpid()) + "-" + std::to_string(sequence++);
  { std::ofstream(base + ".tmp") << request << "\n"; }
  std::filesystem::rename(base + ".tmp", base + ".req");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!std::filesystem::exists(base + ".done")) {
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("no answer from the host to " + request);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::stringstream answer;
  answer << std::ifstream(base + ".done").rdbuf();
  std::filesystem::remove(base + ".done");
  if (answer.str() != "ok\n") throw std::runtime_error(request + ": " + answer.str());
}

// Where the cluster's processes are the host's (the native cluster), the
// share directory to ask for their signals; empty where they are this
// guest's.
std::string HostFaultsDir() {
  const char* dir = std::getenv("NBDK_CLUSTER_FAULTS");
  return dir == nullptr ? "" : dir;
}

Status Iptables(const char* op, const std::vector<std::string>& rule) {
  std::vector<std::string> argv = {"iptables", op, "OUTPUT"};
  argv.insert(argv.end(), rule.begin(), rule.end());
  auto r = RunCommand(argv, true);
  if (!r.ok()) return r.status();
  if (r->exit.code != 0) return Status::Internal(std::string("iptables ") + op + ": " + r->stdout_text);
  return Status::Ok();
}

}  // namespace

Paused::Paused(const std::string& program) : program_(program), host_faults_dir_(HostFaultsDir()) {
  if (!host_faults_dir_.empty()) {
    AskHost(host_faults_dir_, "STOP " + program_);
    return;
  }
  pids_ = vmtest::ProcessesOf(program);
  if (pids_.empty()) throw std::runtime_error("no " + program + " to pause");
  for (pid_t pid : pids_) ::kill(pid, SIGSTOP);
}

Paused::~Paused() {
  if (!host_faults_dir_.empty()) {
    try {
      AskHost(host_faults_dir_, "CONT " + program_);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "vm_faults: %s\n", e.what());
    }
    return;
  }
  for (pid_t pid : pids_) ::kill(pid, SIGCONT);
}

// All rules or none: a rule that fails takes back the ones before it.
Partition::Partition() {
  for (size_t i = 0; i < kDropRules.size(); ++i) {
    Status added = Iptables("-A", kDropRules[i]);
    if (added.ok()) continue;
    while (i-- > 0) (void)Iptables("-D", kDropRules[i]);
    throw std::runtime_error(added.ToString());
  }
}

Partition::~Partition() {
  for (const auto& rule : kDropRules) {
    Status removed = Iptables("-D", rule);
    if (!removed.ok()) std::fprintf(stderr, "vm_faults: %s\n", removed.ToString().c_str());
  }
}

void PrintStalledDevice(const std::string& device) {
  if (device.empty()) return;
  auto report = RunCommand({NBD_IO_REPORT, device}, true);
  if (report.ok()) std::fprintf(stderr, "%s\n", report->stdout_text.c_str());
}

bool RecoverLaggyPgs() {
  // The OSD's own view (the PG map needs a manager, which the VM's Ceph
  // does not run): an op parked in waiting_for_readable.
  bool laggy = false;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/run/ceph", ec)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with("ceph-osd.") || !name.ends_with(".asok")) continue;
    auto ops = RunCommand({"ceph", "--admin-daemon", entry.path().string(), "dump_ops_in_flight"}, true);
    laggy = laggy || (ops.ok() && ops->stdout_text.find("\"waiting for readable\"") != std::string::npos);
  }
  if (!laggy) return false;
  std::fprintf(stderr, "vm_faults: ops wait for a laggy PG's read lease; marking osd.0 down\n");
  auto down = RunCommand({"ceph", "osd", "down", "0"}, true);
  return down.ok() && down->exit.code == 0;
}

}  // namespace nbdk::faults
