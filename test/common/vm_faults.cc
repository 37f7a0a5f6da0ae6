#include "test/common/vm_faults.h"

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
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

Status Iptables(const char* op, const std::vector<std::string>& rule) {
  std::vector<std::string> argv = {"iptables", op, "OUTPUT"};
  argv.insert(argv.end(), rule.begin(), rule.end());
  auto r = RunCommand(argv, true);
  if (!r.ok()) return r.status();
  if (r->exit.code != 0) return Status::Internal(std::string("iptables ") + op + ": " + r->stdout_text);
  return Status::Ok();
}

}  // namespace

Paused::Paused(const std::string& program) : pids_(vmtest::ProcessesOf(program)) {
  if (pids_.empty()) throw std::runtime_error("no " + program + " to pause");
  for (pid_t pid : pids_) ::kill(pid, SIGSTOP);
}

Paused::~Paused() {
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
