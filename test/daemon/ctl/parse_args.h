// The tests' way to run ParseCtlArgs: the arguments after the program name.
#pragma once

#include <string>
#include <vector>

#include "daemon/ctl/ctl_args.h"

namespace nbdk::ctl::testing {

inline Result<CtlCommand> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "nbdkeeperctl");
  return ParseCtlArgs(args);
}

}  // namespace nbdk::ctl::testing
