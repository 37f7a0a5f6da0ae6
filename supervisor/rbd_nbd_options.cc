#include "supervisor/rbd_nbd_options.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "base/quote_field.h"

namespace nbdk {
namespace {

enum class ValueRule {
  kNone,       // a flag: "exclusive"
  kZero,       // only 0: a timeout that nbdkeeper keeps off
  kUnsigned,   // 1 to 12 decimal digits
  kChoice,     // one of `choices`
  kCrushPath,  // "host=a|rack=b": CanonicalCrushLocation
};

struct AllowedOption {
  std::string_view key;       // normalised: '-' written as '_'
  std::string_view spelling;  // the argv token's name, as rbd-nbd documents it
  ValueRule rule;
  std::string_view choices = "";  // kChoice: "|a|b|"
};

// Options that change how a mapping talks to Ceph or the kernel, never what
// it serves or where it writes: each was read in rbd-nbd 16.2 or librbd.
constexpr AllowedOption kAllowed[] = {
    {"try_netlink", "try-netlink", ValueRule::kNone},
    {"exclusive", "exclusive", ValueRule::kNone},
    {"notrace", "notrace", ValueRule::kNone},
    {"quiesce", "quiesce", ValueRule::kNone},
    {"io_timeout", "io-timeout", ValueRule::kZero},
    {"timeout", "timeout", ValueRule::kZero},
    {"max_part", "max_part", ValueRule::kUnsigned},
    {"nbds_max", "nbds_max", ValueRule::kUnsigned},
    {"rbd_read_from_replica_policy", "rbd_read_from_replica_policy", ValueRule::kChoice, "|default|balance|localize|"},
    {"crush_location", "crush_location", ValueRule::kCrushPath},
    {"ms_client_mode", "ms_client_mode", ValueRule::kChoice, "|crc|secure|prefer-crc|prefer-secure|"},
    {"rbd_readahead_max_bytes", "rbd_readahead_max_bytes", ValueRule::kUnsigned},
    {"rbd_readahead_trigger_requests", "rbd_readahead_trigger_requests", ValueRule::kUnsigned},
    {"rbd_readahead_disable_after_bytes", "rbd_readahead_disable_after_bytes", ValueRule::kUnsigned},
    {"rbd_concurrent_management_ops", "rbd_concurrent_management_ops", ValueRule::kUnsigned},
};

// Why an option a user might reasonably try is refused: the answer names
// the fix, not only the rule.
struct RefusedOption {
  std::string_view key;
  std::string_view why;
};
constexpr RefusedOption kExplained[] = {
    {"reattach_timeout", "nbdkeeper sets it from its reattach_timeout_s setting"},
    {"read_only", "the volume capability's access mode decides it"},
    {"rbd_cache", "librbd's cache stays off: writes it acknowledged are lost when rbd-nbd is killed"},
    {"key", "secrets never go on a command line"},
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string Normalise(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

bool AllDigits(std::string_view v, size_t max) {
  return !v.empty() && v.size() <= max && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A CRUSH name as Ceph takes it: [A-Za-z0-9_.-]+, not an option.
bool IsCrushName(std::string_view s) {
  return !s.empty() && s.front() != '-' && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

// "host=a|rack=b" (or krbd's "host:a|rack:b", or ';' between pairs) ->
// "host=a;rack=b", the crush_location Ceph's config parser reads (it splits
// pairs at ';', ',' and blanks only: a '|' would make one bad pair, and
// librbd would keep no location). nullopt when a pair is not type=name.
std::optional<std::string> CanonicalCrushLocation(std::string_view value) {
  std::string out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find_first_of("|;", start);
    if (end == std::string_view::npos) end = value.size();
    std::string_view pair = value.substr(start, end - start);
    start = end + 1;
    size_t sep = pair.find_first_of("=:");
    if (sep == std::string_view::npos || !IsCrushName(pair.substr(0, sep)) || !IsCrushName(pair.substr(sep + 1))) {
      return std::nullopt;
    }
    out += (out.empty() ? "" : ";") + std::string(pair.substr(0, sep)) + "=" + std::string(pair.substr(sep + 1));
  }
  return out;
}

// Checks `value` by the option's rule; `canonical` is what goes on the
// command line (the value itself, but for a CRUSH location).
Status CheckValue(const AllowedOption& o, std::string_view name, bool has_value, std::string_view value,
                  std::string* canonical) {
  *canonical = value;
  std::string shown = "map option " + QuoteField(name);
  if (o.rule == ValueRule::kNone) {
    return has_value ? Status::InvalidArgument(shown + ": takes no value") : Status::Ok();
  }
  if (!has_value || value.empty()) return Status::InvalidArgument(shown + ": needs a value");
  switch (o.rule) {
    case ValueRule::kZero:
      if (AllDigits(value, 12) && std::all_of(value.begin(), value.end(), [](char c) { return c == '0'; })) {
        return Status::Ok();
      }
      return Status::InvalidArgument(shown + ": only 0 is allowed (got " + QuoteField(value) +
                                     "): with a timeout, a Ceph stall longer than it fails all IO on the device "
                                     "with EIO; nbdkeeper manages the block queue timeout itself");
    case ValueRule::kUnsigned:
      if (AllDigits(value, 12)) return Status::Ok();
      return Status::InvalidArgument(shown + ": " + QuoteField(value) + " is not a non-negative number");
    case ValueRule::kChoice: {
      if (o.choices.find("|" + std::string(value) + "|") != std::string_view::npos) return Status::Ok();
      return Status::InvalidArgument(shown + ": " + QuoteField(value) + " is not one of " + std::string(o.choices));
    }
    case ValueRule::kCrushPath: {
      auto location = CanonicalCrushLocation(value);
      if (!location) {
        return Status::InvalidArgument(shown + ": " + QuoteField(value) +
                                       " is not a CRUSH location (type=name|type=name, or krbd's type:name)");
      }
      *canonical = *location;
      return Status::Ok();
    }
    case ValueRule::kNone:
      break;
  }
  return Status::Ok();
}

// One option without its leading "--" -> its canonical argv token.
Result<std::string> CanonicalToken(std::string_view option) {
  size_t eq = option.find('=');
  std::string_view name = option.substr(0, eq);
  std::string key = Normalise(name);
  auto it =
      std::find_if(std::begin(kAllowed), std::end(kAllowed), [&key](const AllowedOption& o) { return o.key == key; });
  if (it == std::end(kAllowed)) {
    for (const RefusedOption& r : kExplained) {
      if (key == r.key || key == "no_" + std::string(r.key)) {
        return Status::InvalidArgument("map option " + QuoteField(name) + " is not allowed: " + std::string(r.why));
      }
    }
    std::string allowed;
    for (const AllowedOption& o : kAllowed) allowed += (allowed.empty() ? "" : ", ") + std::string(o.spelling);
    return Status::InvalidArgument("map option " + QuoteField(name) + " is not allowed (allowed: " + allowed + ")");
  }
  bool has_value = eq != std::string_view::npos;
  std::string_view value = has_value ? option.substr(eq + 1) : std::string_view();
  std::string canonical;
  NBDK_RETURN_IF_ERROR(CheckValue(*it, name, has_value, value, &canonical));
  return "--" + std::string(it->spelling) + (has_value ? "=" + canonical : "");
}

}  // namespace

Result<std::vector<std::string>> ParseRbdNbdOptions(std::string_view csv) {
  std::vector<std::string> tokens;
  size_t start = 0;
  while (start <= csv.size()) {
    size_t end = csv.find(',', start);
    if (end == std::string_view::npos) end = csv.size();
    std::string_view option = Trim(csv.substr(start, end - start));
    start = end + 1;
    if (option.starts_with("--")) option.remove_prefix(2);
    if (option.empty()) continue;
    auto token = CanonicalToken(option);
    if (!token.ok()) return token.status();
    tokens.push_back(std::move(*token));
  }
  return tokens;
}

Status ValidateRbdNbdOptions(const std::vector<std::string>& tokens) {
  for (const std::string& token : tokens) {
    if (!token.starts_with("--")) {
      return Status::InvalidArgument("map option " + QuoteField(token) + ": not an option (must start with '--')");
    }
    auto canonical = CanonicalToken(std::string_view(token).substr(2));
    if (!canonical.ok()) return canonical.status();
  }
  return Status::Ok();
}

Status CheckSnapshotMapOptions(const std::vector<std::string>& tokens) {
  for (const std::string& token : tokens) {
    auto canonical = CanonicalToken(std::string_view(token).substr(token.starts_with("--") ? 2 : 0));
    if (canonical.ok() && *canonical == "--exclusive") {
      return Status::InvalidArgument("map option " + QuoteField(token) +
                                     " is not allowed for a snapshot: it would take the image's exclusive lock");
    }
  }
  return Status::Ok();
}

}  // namespace nbdk
