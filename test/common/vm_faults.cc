#include "test/common/vm_faults.h"

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "test/common/vm_command.h"
#include "test/common/vm_volume.h"

namespace nbdk::faults {
namespace {

using vmtest::RunCommand;

const std::vector<std::vector<std::string>> kDropRules = {
    {"-o", "lo", "-p", "tcp", "--dport", "3300", "-j", "DROP"},
    {"-o", "lo", "-p", "tcp", "--dport", "6789", "-j", "DROP"},
    {"-o", "lo", "-p", "tcp", "--dport", "6800:7300", "-j", "DROP"},
};

void Iptables(const char* op, const std::vector<std::string>& rule) {
  std::vector<std::string> argv = {"iptables", op, "OUTPUT"};
  argv.insert(argv.end(), rule.begin(), rule.end());
  auto r = RunCommand(argv, true);
  if (!r.ok() || r->exit.code != 0) {
    std::fprintf(stderr, "vm_faults: iptables %s failed: %s\n", op, r.ok() ? r->stdout_text.c_str() : "");
    std::exit(2);
  }
}

}  // namespace

Paused::Paused(const std::string& program) : pids_(vmtest::ProcessesOf(program)) {
  if (pids_.empty()) {
    std::fprintf(stderr, "vm_faults: no %s to pause\n", program.c_str());
    std::exit(2);
  }
  for (pid_t pid : pids_) ::kill(pid, SIGSTOP);
}

Paused::~Paused() {
  for (pid_t pid : pids_) ::kill(pid, SIGCONT);
}

Partition::Partition() {
  for (const auto& rule : kDropRules) Iptables("-A", rule);
}

Partition::~Partition() {
  for (const auto& rule : kDropRules) Iptables("-D", rule);
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
  for (const auto& entry : std::filesystem::directory_iterator("/run/ceph")) {
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
