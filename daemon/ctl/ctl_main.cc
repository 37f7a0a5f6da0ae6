// nbdkeeperctl: the operator's command line for nbdkeeperd.
#include <cstdio>
#include <string>
#include <vector>

#include "base/version.h"
#include "daemon/ctl/ctl_args.h"
#include "daemon/ctl/ctl_commands.h"
#include "daemon/ctl/daemon_client.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  auto command = nbdk::ctl::ParseCtlArgs(args);
  if (!command.ok()) {
    nbdk::ctl::PrintError(command.status().message());
    return nbdk::ctl::kExitUsage;
  }
  if (command->action == nbdk::ctl::CtlAction::kHelp) {
    std::fputs(nbdk::ctl::CtlUsage().c_str(), stdout);
    return 0;
  }
  if (command->action == nbdk::ctl::CtlAction::kVersion) {
    std::printf("nbdkeeperctl %s\n", nbdk::kVersion);
    return 0;
  }
  return nbdk::ctl::RunCtlCommand(*command);
}
