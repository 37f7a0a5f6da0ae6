// Test-only: what the VM benchmarks share to print their figures and to
// stop on broken setup.
#pragma once

#include <errno.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace nbdk::bench {

using Clock = std::chrono::steady_clock;

inline double Secs(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

inline double Max(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

// "<program>: <why>" on stderr, exit 1: the benchmark cannot measure.
[[noreturn]] inline void Die(const std::string& why) {
  std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, why.c_str());
  std::exit(1);
}

}  // namespace nbdk::bench
