// nbdkeeperctl's commands, each returning the process's exit status
// (daemon/ctl/daemon_client.h Exit) after printing its result or one line
// naming what went wrong and the fix.
#pragma once

#include "daemon/ctl/ctl_args.h"

namespace nbdk::ctl {

int RunCtlCommand(const CtlCommand& command);

}  // namespace nbdk::ctl
