// Test-only: what the benchmarks read about a process from /proc: CPU time
// (whole, per thread, and the machine's), RSS, and every thread's wakeups
// (context switches) over a window.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
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

// utime + stime of a process, in seconds (/proc/<pid>/stat fields 14, 15;
// also /proc/<pid>/task/<tid>/stat for one thread).
inline double CpuSecondsOfStat(const std::string& path) {
  std::ifstream in(path);
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

inline double CpuSeconds(pid_t pid) { return CpuSecondsOfStat("/proc/" + std::to_string(pid) + "/stat"); }

// CPU seconds every CPU of the machine spent busy (user, nice, system, irq,
// softirq, steal; not idle or iowait) since boot, from /proc/stat.
inline double BusyCpuSeconds() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  return static_cast<double>(user + nice + system + irq + softirq + steal) /
         static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// CPU seconds of each thread of `pid`, summed by thread name (comm).
inline std::map<std::string, double> CpuSecondsByThreadName(pid_t pid) {
  std::map<std::string, double> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream comm(entry.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (entry.path().filename() == std::to_string(pid)) name += " (main)";
    out[name] += CpuSecondsOfStat(entry.path() / "stat");
  }
  return out;
}

// "  <name> <s> s" for each thread name whose CPU grew from `before` to
// `after`, largest first, then the total.
inline void PrintThreadCpu(const std::map<std::string, double>& before, const std::map<std::string, double>& after,
                           const char* prefix) {
  std::vector<std::pair<double, std::string>> grew;
  double total = 0;
  for (const auto& [name, now] : after) {
    auto was = before.find(name);
    double used = now - (was == before.end() ? 0 : was->second);
    total += used;
    if (used > 0) grew.emplace_back(used, name);
  }
  std::sort(grew.rbegin(), grew.rend());
  for (const auto& [used, name] : grew) std::printf("%s%-18s %7.2f s\n", prefix, name.c_str(), used);
  std::printf("%s%-18s %7.2f s\n", prefix, "all", total);
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
