// nbdkeeperctl's commands, each returning the process's exit status
// (daemon/ctl/daemon_client.h Exit) after printing its result or one line
// naming what went wrong and the fix.
#pragma once

#include <string_view>

#include "daemon/ctl/ctl_args.h"
#include "daemon/ctl/daemon_client.h"

namespace nbdk::ctl {

int RunCtlCommand(const CtlCommand& command);

// Prints "nbdkeeperctl: <message>" on stderr, the one way the CLI reports an
// error: one line whatever the message holds (an argument's control
// characters escaped, a daemon's huge answer cut: BoundMessage in
// base/quote_field.h).
void PrintError(std::string_view message);
// PrintError(error.message), then error.exit.
int FailWith(const CtlError& error);

}  // namespace nbdk::ctl
