#include "daemon/fatal_signal_report.h"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>

namespace nbdk {
namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr int kMaxFatalFrames = 64;

// A frame buffer that needs no allocation in the handler.
void* fatal_frames[kMaxFatalFrames];

void WriteToStderr(const char* text) {
  size_t left = std::strlen(text);
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<size_t>(n);
  }
}

// Only async-signal-safe calls, but backtrace(3), whose one unsafe step
// (loading libgcc) ReportFatalSignals took before any signal could come.
void OnFatalSignal(int signum) {
  char number[4] = {static_cast<char>('0' + signum / 10 % 10), static_cast<char>('0' + signum % 10), '\0'};
  WriteToStderr("nbdkeeperd: fatal signal ");
  WriteToStderr(signum < 10 ? number + 1 : number);
  WriteToStderr(" (");
  WriteToStderr(sigabbrev_np(signum));
  WriteToStderr("); backtrace of the thread it hit:\n");
  int depth = backtrace(fatal_frames, kMaxFatalFrames);
  backtrace_symbols_fd(fatal_frames, depth, STDERR_FILENO);
  // SA_RESETHAND restored the default action: die of the signal itself.
  ::raise(signum);
}

}  // namespace

bool ReportFatalSignals() {
  backtrace(fatal_frames, 1);
  struct sigaction action {};
  action.sa_handler = OnFatalSignal;
  action.sa_flags = SA_RESETHAND | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  for (int signum : kFatalSignals) {
    if (sigaction(signum, &action, nullptr) != 0) return false;
  }
  return true;
}

}  // namespace nbdk
