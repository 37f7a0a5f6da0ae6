// nbdkeeperd: parses the command line and runs the daemon.
#include <sys/prctl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/log.h"
#include "base/version.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/fatal_signal_report.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  auto parsed = nbdk::ParseArgs(args);
  if (!parsed.ok()) {
    std::fprintf(stderr, "nbdkeeperd: %s\n", parsed.status().message().c_str());
    return 2;
  }
  switch (parsed->action) {
    case nbdk::Action::kHelp:
      std::fputs(nbdk::UsageText().c_str(), stdout);
      return 0;
    case nbdk::Action::kVersion:
      std::printf("nbdkeeperd %s\n", nbdk::kVersion);
      return 0;
    case nbdk::Action::kRun:
      break;
  }
  // cephx keys and LUKS passphrases pass through this process's memory: a
  // crash (the watchdog's SIGABRT too) must not write them into a core
  // file, nor may another process of its user read them through ptrace or
  // /proc. Its rbd-nbd children are dumpable again after their exec.
  if (prctl(PR_SET_DUMPABLE, 0) != 0) {
    std::fprintf(stderr, "nbdkeeperd: prctl(PR_SET_DUMPABLE, 0): %s\n", std::strerror(errno));
    return 1;
  }
  if (!nbdk::ReportFatalSignals()) {
    std::fprintf(stderr, "nbdkeeperd: sigaction of the fatal signals: %s\n", std::strerror(errno));
    return 1;
  }
  nbdk::SetLogLevel(parsed->config.log_level);
  return nbdk::RunDaemon(parsed->config);
}
