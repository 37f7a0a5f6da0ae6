#include "test/chaos/chaos_options.h"

#include <charconv>

namespace nbdk::chaos {
namespace {

template <typename T>
Status ParseNumber(const std::string& flag, const std::string& text, T min, T* out) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min) {
    return Status::InvalidArgument(flag + ": not a number >= " + std::to_string(min) + ": '" + text + "'");
  }
  *out = value;
  return Status::Ok();
}

}  // namespace

std::string ChaosUsage() {
  return "usage: chaos_run [--seed N] [--child-kills N] [--double-kills N] [--stops N] [--daemon-kills N]\n"
         "                 [--daemon-terms N] [--down-kills N] [--stage-kills N] [--min-gap-ms N]\n"
         "                 [--max-gap-ms N] [--fio-mib N] [--fio-rate-iops N] [--report PATH|-]\n"
         "Runs in the test VM: test/vm/vm-run -- build/test/chaos/chaos_run ...\n";
}

Result<ChaosOptions> ParseChaosOptions(const std::vector<std::string>& args) {
  ChaosOptions o;
  const std::pair<const char*, int*> counts[] = {
      {"--child-kills", &o.child_kills},   {"--double-kills", &o.double_kills},   {"--stops", &o.stops},
      {"--daemon-kills", &o.daemon_kills}, {"--daemon-terms", &o.daemon_terms},   {"--down-kills", &o.down_kills},
      {"--stage-kills", &o.stage_kills},   {"--min-gap-ms", &o.min_gap_ms},       {"--max-gap-ms", &o.max_gap_ms},
      {"--fio-mib", &o.fio_mib},           {"--fio-rate-iops", &o.fio_rate_iops},
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (i + 1 >= args.size()) return Status::InvalidArgument(flag + ": missing value");
    const std::string& value = args[++i];
    if (flag == "--seed") {
      NBDK_RETURN_IF_ERROR(ParseNumber<uint64_t>(flag, value, 0, &o.seed));
      o.seed_given = true;
      continue;
    }
    if (flag == "--report") {
      o.report_path = value;
      continue;
    }
    bool known = false;
    for (const auto& [name, field] : counts) {
      if (flag != name) continue;
      NBDK_RETURN_IF_ERROR(ParseNumber<int>(flag, value, 0, field));
      known = true;
    }
    if (!known) return Status::InvalidArgument("unknown flag " + flag);
  }
  if (o.max_gap_ms < o.min_gap_ms) return Status::InvalidArgument("--max-gap-ms is below --min-gap-ms");
  if (o.fio_mib < 1) return Status::InvalidArgument("--fio-mib: at least 1");
  return o;
}

}  // namespace nbdk::chaos
