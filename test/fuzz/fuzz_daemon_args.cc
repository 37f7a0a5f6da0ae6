// The daemon's command line (daemon/config.h ParseArgs): the input is argv
// with NUL between arguments.
#include "daemon/config.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args = nbdk::fuzz::Split(nbdk::fuzz::Text(data, size), '\0');
  // --config would read whatever file the input names (a FIFO blocks); the
  // file's content is the daemon_config_json target's.
  for (const std::string& arg : args) {
    if (arg.starts_with("--config")) return 0;
  }
  args.insert(args.begin(), "nbdkeeperd");
  auto parsed = nbdk::ParseArgs(args);
  if (parsed.ok() && parsed->action == nbdk::Action::kRun) {
    NBDK_FUZZ_CHECK(!parsed->config.node_id.empty());
    NBDK_FUZZ_CHECK(parsed->config.csi_socket_path.starts_with("/"));
  }
  return 0;
}
