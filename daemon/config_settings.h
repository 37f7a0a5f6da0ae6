// The daemon's settings, one row each: the one table that the flags, the
// config file (daemon/config.h) and --help read. A setting's flag is "--"
// + its name with '_' as '-'; its JSON key is its name.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "daemon/config.h"

namespace nbdk {

struct Setting {
  const char* name;
  bool numeric;
  const char* help;
  // Checks the value and sets it; InvalidArgument says what is wrong.
  std::function<Status(Config*, std::string_view)> apply;
};

const std::vector<Setting>& Settings();

// `text` as a number in `base` up to `max`; InvalidArgument otherwise.
Result<uint64_t> ParseUnsigned(std::string_view text, int base, uint64_t max);

// A setting's former name, still accepted as flag and as JSON key alike.
struct SettingAlias {
  const char* name;
  const char* setting;
};
std::span<const SettingAlias> SettingAliases();

// After every flag: --node-labels-file's labels join --node-labels' (a key
// in both is an error), then the node's topology segments from
// --domain-labels (csi/topology.h NodeTopology). BLOCKING (reads the file).
Status ResolveNodeTopology(Config* c);

}  // namespace nbdk
