// Mount flags from a volume capability (csi/mount_flags.h): the input is
// the flags, one per line, after a first line naming the filesystem. What
// the allow-list lets through passes it again unchanged; a refusal keeps to
// the error rule (base/quote_field.h).
#include "csi/mount_flags.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> lines = nbdk::fuzz::Split(nbdk::fuzz::Text(data, size), '\n');
  std::string fs_type = lines.front();
  std::vector<std::string> flags(lines.begin() + 1, lines.end());
  auto options = nbdk::ParseMountFlags(flags, fs_type, "mount_flags");
  NBDK_FUZZ_CHECK(nbdk::fuzz::WithinErrorRule(options.status()));
  if (!options.ok()) return 0;
  auto again = nbdk::ParseMountFlags(*options, fs_type, "mount_flags");
  NBDK_FUZZ_CHECK(again.ok() && *again == *options);
  return 0;
}
