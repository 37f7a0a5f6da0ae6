#include "test/chaos/keeper.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "test/common/http_client.h"

namespace nbdk::chaos {
namespace {

using Clock = std::chrono::steady_clock;

// /proc/<pid>/stat after the command's closing parenthesis: state is the
// first field, utime and stime the 12th and 13th.
std::vector<std::string> StatFields(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  std::vector<std::string> fields;
  size_t paren = line.rfind(')');
  if (paren == std::string::npos) return fields;
  std::stringstream rest(line.substr(paren + 1));
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

// The CPU time of a process that has exited but is not reaped yet, so that
// its last second of work (SIGTERM's shutdown) counts too. Waits for the
// zombie state up to `timeout`; reads whatever it has then.
double CpuSecondsAtExit(pid_t pid, std::chrono::seconds timeout) {
  auto give_up = Clock::now() + timeout;
  std::vector<std::string> fields = StatFields(pid);
  while (!fields.empty() && fields[0] != "Z" && Clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    fields = StatFields(pid);
  }
  if (fields.size() < 13) return 0;
  static const double kTicks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return (std::stod(fields[11]) + std::stod(fields[12])) / kTicks;
}

uint64_t RssKib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6));
  }
  return 0;
}

}  // namespace

std::optional<double> MetricValue(const std::string& page, const std::string& name) {
  std::stringstream lines(page);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > name.size() && line.compare(0, name.size(), name) == 0 && line[name.size()] == ' ') {
      return std::stod(line.substr(name.size() + 1));
    }
  }
  return std::nullopt;
}

Keeper::Keeper(std::string root, vmtest::VmCeph ceph)
    : root_(std::move(root)), ceph_(std::move(ceph)), daemon_(NBDKEEPERD_PATH, root_) {}

Status Keeper::Start(uint64_t running_volumes) {
  // A short reattach window would turn a slow heal under emulation into an
  // expiry; the default (300 s) is what production runs.
  if (!daemon_.Start({"--ceph-csi-config=" + root_ + "/ceph-csi-config.json", "--ceph-conf=" + ceph_.conf,
                      "--key-dir=" + key_dir(), "--log-level=info"})) {
    return Status::Internal("nbdkeeperd did not start (see " + log_path() + ")");
  }
  Incarnation incarnation;
  incarnation.pid = daemon_.pid();
  incarnation.adoptions_expected = running_volumes;
  incarnations_.push_back(std::move(incarnation));
  node_ = csi::v1::Node::NewStub(grpc::CreateChannel(daemon_.endpoint(), grpc::InsecureChannelCredentials()));
  // Ready: start-up healing of the journaled volumes has finished.
  auto give_up = Clock::now() + std::chrono::seconds(120);
  while (test::HttpGet(health_port(), "/readyz").status != 200) {
    if (Clock::now() > give_up) return Status::DeadlineExceeded("nbdkeeperd not ready 120 s after its start");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Status::Ok();
}

Status Keeper::Stop(int signum, const std::string& ended_by) {
  Incarnation& inc = current();
  inc.ended_by = ended_by;
  SampleRss();
  auto reply = test::HttpGet(health_port(), "/metrics");
  if (reply.status == 200) {
    KeeperCounters c;
    c.deaths = MetricValue(reply.body, "nbdkeeper_rbd_nbd_deaths_total").value_or(-1);
    c.reattaches = MetricValue(reply.body, "nbdkeeper_reattaches_total").value_or(-1);
    c.adoptions = MetricValue(reply.body, "nbdkeeper_adoptions_total").value_or(-1);
    c.expirations = MetricValue(reply.body, "nbdkeeper_expirations_total").value_or(-1);
    inc.counters = c;
  }
  node_.reset();
  pid_t pid = daemon_.pid();
  ::kill(pid, signum);
  inc.cpu_s = CpuSecondsAtExit(pid, std::chrono::seconds(30));
  int wait_status = daemon_.Wait(30000);
  if (wait_status == -1) return Status::DeadlineExceeded("nbdkeeperd did not exit 30 s after " + ended_by);
  if (signum == SIGTERM) inc.exit_ok = WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
  return Status::Ok();
}

uint64_t Keeper::SampleRss() {
  uint64_t rss = RssKib(daemon_.pid());
  current().max_rss_kib = std::max(current().max_rss_kib, rss);
  return rss;
}

}  // namespace nbdk::chaos
