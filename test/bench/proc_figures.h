// Test-only: what the benchmarks read about a process from /proc: CPU time,
// RSS, and every thread's wakeups (context switches) over a window.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace nbdk::bench {

// utime + stime of a process, in seconds (/proc/<pid>/stat fields 14, 15).
inline double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string f;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::stoull(f);
    if (i == 15) stime = std::stoull(f);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// VmRSS in MiB.
inline double RssMiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

// One thread's wakeups per second over a window: each time it went to sleep
// and ran again (voluntary context switches) or was preempted (involuntary).
struct ThreadWakeups {
  pid_t tid = 0;
  std::string name;  // /proc/<pid>/task/<tid>/comm; "(main)" marks tid == pid
  double per_s = 0;
};

namespace detail {
inline std::map<pid_t, std::pair<std::string, unsigned long long>> ContextSwitches(pid_t pid) {
  std::map<pid_t, std::pair<std::string, unsigned long long>> out;
  std::error_code ec;
  std::string task = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& entry : std::filesystem::directory_iterator(task, ec)) {
    pid_t tid = static_cast<pid_t>(std::atoi(entry.path().filename().c_str()));
    std::ifstream comm(entry.path() / "comm");
    std::string name;
    std::getline(comm, name);
    unsigned long long switches = 0;
    std::ifstream status(entry.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0 || line.rfind("nonvoluntary_ctxt_switches:", 0) == 0) {
        switches += std::stoull(line.substr(line.find(':') + 1));
      }
    }
    out[tid] = {name, switches};
  }
  return out;
}
}  // namespace detail

// Samples every thread of `pid` at the start and end of a `seconds` window;
// threads that did not live through the whole window are left out.
inline std::vector<ThreadWakeups> SampleThreadWakeups(pid_t pid, double seconds) {
  auto before = detail::ContextSwitches(pid);
  auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  auto after = detail::ContextSwitches(pid);
  double window = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<ThreadWakeups> out;
  for (const auto& [tid, now] : after) {
    auto was = before.find(tid);
    if (was == before.end()) continue;
    std::string name = tid == pid ? now.first + " (main)" : now.first;
    out.push_back({tid, name, static_cast<double>(now.second - was->second.second) / window});
  }
  return out;
}

// "  <tid> <name> <n>/s" per thread, then the total, each line prefixed.
inline void PrintThreadWakeups(const std::vector<ThreadWakeups>& threads, const char* prefix) {
  double total = 0;
  for (const ThreadWakeups& t : threads) {
    std::printf("%s%7d  %-16s %7.2f/s\n", prefix, static_cast<int>(t.tid), t.name.c_str(), t.per_s);
    total += t.per_s;
  }
  std::printf("%s%7s  %-16s %7.2f/s (%zu threads)\n", prefix, "", "all", total, threads.size());
}

}  // namespace nbdk::bench
