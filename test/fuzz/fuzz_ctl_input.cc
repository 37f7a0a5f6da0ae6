// nbdkeeperctl's inputs (daemon/ctl): its command line (one argument per
// line), a key file, and the daemon's /status page. Parses never crash; a
// map command that parses names a pool and image that pass Ceph's rule; a
// bad command line is refused within the error rule
// (base/quote_field.h).
#include "ceph/image_spec.h"
#include "daemon/ctl/cephx_key.h"
#include "daemon/ctl/ctl_args.h"
#include "daemon/ctl/volume_table.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = nbdk::fuzz::Text(data, size);
  std::vector<std::string> args = nbdk::fuzz::Split(text, '\n');
  args.insert(args.begin(), "nbdkeeperctl");
  auto command = nbdk::ctl::ParseCtlArgs(args);
  NBDK_FUZZ_CHECK(nbdk::fuzz::WithinErrorRule(command.status()));
  if (command.ok() && command->action == nbdk::ctl::CtlAction::kMap) {
    NBDK_FUZZ_CHECK(nbdk::CheckCephName("pool", command->map.pool, true).ok());
    NBDK_FUZZ_CHECK(nbdk::CheckCephName("image", command->map.image, true).ok());
  }
  (void)nbdk::ctl::CephxKeyFrom(std::string(text), "admin");
  auto status = nbdk::ctl::ParseDaemonStatus(text);
  if (status.ok()) (void)nbdk::ctl::RenderTable(*status, true);
  return 0;
}
