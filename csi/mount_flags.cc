#include "csi/mount_flags.h"

#include <algorithm>
#include <cctype>

#include "base/quote_field.h"
#include "base/text_rules.h"

namespace nbdk {
namespace {

constexpr size_t kMaxMountFlagBytes = 4096;

enum class FlagValue { kNone, kSize, kChoice, kSelinux };

struct AllowedFlag {
  std::string_view name;
  FlagValue value;
  std::string_view choices = "";  // "|a|b|" for kChoice
  std::string_view fs = "";       // "" for every filesystem, else "ext4" or "xfs"
};

constexpr AllowedFlag kAllowed[] = {
    {"ro", FlagValue::kNone},
    {"atime", FlagValue::kNone},
    {"noatime", FlagValue::kNone},
    {"relatime", FlagValue::kNone},
    {"norelatime", FlagValue::kNone},
    {"strictatime", FlagValue::kNone},
    {"nostrictatime", FlagValue::kNone},
    {"diratime", FlagValue::kNone},
    {"nodiratime", FlagValue::kNone},
    {"lazytime", FlagValue::kNone},
    {"nolazytime", FlagValue::kNone},
    {"exec", FlagValue::kNone},
    {"noexec", FlagValue::kNone},
    {"nosuid", FlagValue::kNone},
    {"nodev", FlagValue::kNone},
    {"sync", FlagValue::kNone},
    {"async", FlagValue::kNone},
    {"dirsync", FlagValue::kNone},
    {"discard", FlagValue::kNone},
    {"nodiscard", FlagValue::kNone},
    {"iversion", FlagValue::kNone},
    {"noiversion", FlagValue::kNone},
    {"context", FlagValue::kSelinux},
    {"fscontext", FlagValue::kSelinux},
    {"defcontext", FlagValue::kSelinux},
    {"rootcontext", FlagValue::kSelinux},
    {"acl", FlagValue::kNone, "", "ext4"},
    {"noacl", FlagValue::kNone, "", "ext4"},
    {"user_xattr", FlagValue::kNone, "", "ext4"},
    {"nouser_xattr", FlagValue::kNone, "", "ext4"},
    {"data", FlagValue::kChoice, "|ordered|journal|writeback|", "ext4"},
    {"errors", FlagValue::kChoice, "|remount-ro|continue|", "ext4"},
    {"commit", FlagValue::kSize, "", "ext4"},
    {"stripe", FlagValue::kSize, "", "ext4"},
    {"delalloc", FlagValue::kNone, "", "ext4"},
    {"nodelalloc", FlagValue::kNone, "", "ext4"},
    {"auto_da_alloc", FlagValue::kNone, "", "ext4"},
    {"noauto_da_alloc", FlagValue::kNone, "", "ext4"},
    {"journal_checksum", FlagValue::kNone, "", "ext4"},
    {"nojournal_checksum", FlagValue::kNone, "", "ext4"},
    {"init_itable", FlagValue::kSize, "", "ext4"},
    {"noinit_itable", FlagValue::kNone, "", "ext4"},
    {"inode_readahead_blks", FlagValue::kSize, "", "ext4"},
    {"min_batch_time", FlagValue::kSize, "", "ext4"},
    {"max_batch_time", FlagValue::kSize, "", "ext4"},
    {"block_validity", FlagValue::kNone, "", "ext4"},
    {"noblock_validity", FlagValue::kNone, "", "ext4"},
    {"quota", FlagValue::kNone, "", "ext4"},
    {"noquota", FlagValue::kNone, "", "ext4"},
    {"usrquota", FlagValue::kNone},
    {"grpquota", FlagValue::kNone},
    {"prjquota", FlagValue::kNone},
    {"allocsize", FlagValue::kSize, "", "xfs"},
    {"largeio", FlagValue::kNone, "", "xfs"},
    {"nolargeio", FlagValue::kNone, "", "xfs"},
    {"inode32", FlagValue::kNone, "", "xfs"},
    {"inode64", FlagValue::kNone, "", "xfs"},
    {"logbufs", FlagValue::kSize, "", "xfs"},
    {"logbsize", FlagValue::kSize, "", "xfs"},
    {"noalign", FlagValue::kNone, "", "xfs"},
    {"swalloc", FlagValue::kNone, "", "xfs"},
    {"wsync", FlagValue::kNone, "", "xfs"},
    {"filestreams", FlagValue::kNone, "", "xfs"},
    {"ikeep", FlagValue::kNone, "", "xfs"},
    {"noikeep", FlagValue::kNone, "", "xfs"},
    {"sunit", FlagValue::kSize, "", "xfs"},
    {"swidth", FlagValue::kSize, "", "xfs"},
    {"uquota", FlagValue::kNone, "", "xfs"},
    {"gquota", FlagValue::kNone, "", "xfs"},
    {"pquota", FlagValue::kNone, "", "xfs"},
    {"uqnoenforce", FlagValue::kNone, "", "xfs"},
    {"gqnoenforce", FlagValue::kNone, "", "xfs"},
    {"pqnoenforce", FlagValue::kNone, "", "xfs"},
    {"nouuid", FlagValue::kNone, "", "xfs"},
};

// 1 to 12 digits, optionally followed by one of k, m, g (xfs sizes).
bool IsSize(std::string_view v) {
  if (!v.empty() && std::string_view("kKmMgG").find(v.back()) != std::string_view::npos) v.remove_suffix(1);
  return !v.empty() && v.size() <= 12 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A SELinux context, optionally in double quotes: user:role:type:level, the
// level possibly with a category list ("s0:c1,c2").
bool IsSelinuxContext(std::string_view v) {
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  return !v.empty() && v.size() <= 255 && std::all_of(v.begin(), v.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '.' || c == ',' || c == '-';
  });
}

Status CheckOption(std::string_view option, const std::string& fs_type, const std::string& where) {
  size_t eq = option.find('=');
  std::string_view name = option.substr(0, eq);
  auto it = std::find_if(std::begin(kAllowed), std::end(kAllowed),
                         [&](const AllowedFlag& f) { return f.name == name && (f.fs.empty() || f.fs == fs_type); });
  if (it == std::end(kAllowed)) {
    return Status::InvalidArgument(where + ": a mount option that is not allowed for " + QuoteField(fs_type) +
                                   " (allowed: atime, discard, commit, ACL, quota, allocation and SELinux context "
                                   "options, and ro; see docs/design/hostile-requests.md)");
  }
  bool has_value = eq != std::string_view::npos;
  std::string_view value = has_value ? option.substr(eq + 1) : std::string_view();
  bool ok = false;
  switch (it->value) {
    case FlagValue::kNone:
      ok = !has_value;
      break;
    case FlagValue::kSize:
      ok = has_value && IsSize(value);
      break;
    case FlagValue::kChoice:
      ok = has_value && !value.empty() && it->choices.find("|" + std::string(value) + "|") != std::string_view::npos;
      break;
    case FlagValue::kSelinux:
      ok = has_value && IsSelinuxContext(value);
      break;
  }
  if (!ok) return Status::InvalidArgument(where + ": option " + QuoteField(name) + " has a value outside its rule");
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> ParseMountFlags(const std::vector<std::string>& flags, const std::string& fs_type,
                                                 const std::string& field) {
  size_t total = 0;
  for (const std::string& flag : flags) total += flag.size();
  if (total > kMaxMountFlagBytes) return Status::InvalidArgument(field + ": more than 4 KiB");
  std::vector<std::string> out;
  for (size_t i = 0; i < flags.size(); ++i) {
    const std::string& flag = flags[i];
    std::string where = field + "[" + std::to_string(i) + "]";
    if (HasSpaceOrControl(flag)) return Status::InvalidArgument(where + ": contains whitespace or a control character");
    std::string option;
    bool quoted = false;
    for (size_t j = 0; j <= flag.size(); ++j) {
      if (j == flag.size() || (flag[j] == ',' && !quoted)) {
        if (!option.empty()) {
          NBDK_RETURN_IF_ERROR(CheckOption(option, fs_type, where));
          out.push_back(std::move(option));
        }
        option.clear();
        continue;
      }
      if (flag[j] == '"') quoted = !quoted;
      option.push_back(flag[j]);
    }
    if (quoted) return Status::InvalidArgument(where + ": unbalanced double quote");
  }
  return out;
}

std::vector<std::string> StagingMountOptions(const std::vector<std::string>& flags, bool read_only) {
  std::vector<std::string> options = {"nosuid", "nodev"};
  options.insert(options.end(), flags.begin(), flags.end());
  if (read_only) options.push_back("ro");
  return options;
}

}  // namespace nbdk
