// nbdkeeperd: parses the command line and runs the daemon.
#include <cstdio>
#include <string>
#include <vector>

#include "daemon/config.h"
#include "daemon/daemon.h"
#include "base/log.h"
#include "base/version.h"

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
  nbdk::SetLogLevel(parsed->config.log_level);
  return nbdk::RunDaemon(parsed->config);
}
