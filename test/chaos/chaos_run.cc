// chaos_run: kill rbd-nbd and nbdkeeperd under verified IO, on the real
// kernel nbd driver and a real Ceph (runs in the test VM), and judge what
// is left: fio's verify and IO errors, fsck, leftovers, the daemon's own
// counters. Prints a table and writes a JSON report; exits 0 only on PASS.
//   test/vm/vm-run --timeout 7200 -- $PWD/build/test/chaos/chaos_run --child-kills 200 --down-kills 5
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "test/chaos/chaos_options.h"
#include "test/chaos/chaos_scenario.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::fputs(nbdk::chaos::ChaosUsage().c_str(), stdout);
    return 0;
  }
  auto options = nbdk::chaos::ParseChaosOptions(args);
  if (!options.ok()) {
    std::fprintf(stderr, "chaos_run: %s\n%s", options.status().message().c_str(), nbdk::chaos::ChaosUsage().c_str());
    return 2;
  }
  return nbdk::chaos::ChaosScenario(std::move(*options)).Run();
}
