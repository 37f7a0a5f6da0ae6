#include "csi/mkfs_options.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <span>

#include "base/quote_field.h"

namespace nbdk {
namespace {

// What a value may be.
enum class Value {
  kNone,      // the option takes none
  kNumber,    // decimal digits
  kPercent,   // decimal digits, optionally ".digits" (mke2fs -m)
  kSize,      // decimal digits and an optional unit letter (mkfs.xfs's b s k m g t)
  kBool,      // 0 or 1
  kOptBool,   // a sub-option that is a flag, or =0 / =1
  kFlag,      // a sub-option that takes no value
  kLabel,     // [A-Za-z0-9._-], 1 to 12 bytes (xfs's limit; ext4's is 16)
  kOwner,     // uid:gid
  kWord,      // one of `words`
  kSubopts,   // a comma list of `subopts`
  kFeatures,  // a comma list of `words`, each optionally preceded by ^
};

struct Subopt {
  std::string_view name;
  Value value;
  std::initializer_list<std::string_view> words = {};
};

struct Option {
  char letter;
  Value value;
  std::initializer_list<Subopt> subopts = {};
  std::initializer_list<std::string_view> words = {};
};

// mke2fs(8), as mkfs.ext4.
const Option kExt4[] = {
    {'b', Value::kNumber},
    {'C', Value::kNumber},
    {'e', Value::kWord, {}, {"continue", "remount-ro", "panic"}},
    {'E',
     Value::kSubopts,
     {{"stride", Value::kNumber},
      {"stripe_width", Value::kNumber},
      {"stripe-width", Value::kNumber},
      {"resize", Value::kNumber},
      {"lazy_itable_init", Value::kOptBool},
      {"lazy_journal_init", Value::kOptBool},
      {"packed_meta_blocks", Value::kOptBool},
      {"assume_storage_prezeroed", Value::kOptBool},
      {"num_backup_sb", Value::kWord, {"0", "1", "2"}},
      {"nodiscard", Value::kFlag},
      {"discard", Value::kFlag},
      {"root_owner", Value::kOwner},
      {"encoding", Value::kWord, {"utf8", "utf8-12.1"}},
      {"encoding_flags", Value::kWord, {"strict"}},
      {"orphan_file_size", Value::kNumber}}},
    {'g', Value::kNumber},
    {'G', Value::kNumber},
    {'i', Value::kNumber},
    {'I', Value::kNumber},
    {'j', Value::kNone},
    {'J', Value::kSubopts, {{"size", Value::kNumber}, {"fast_commit_size", Value::kNumber}}},
    {'L', Value::kLabel},
    {'m', Value::kPercent},
    {'N', Value::kNumber},
    {'O', Value::kFeatures, {}, {"64bit",         "bigalloc",      "casefold",
                                 "dir_index",     "dir_nlink",     "ea_inode",
                                 "encrypt",       "ext_attr",      "extent",
                                 "extents",       "extra_isize",   "fast_commit",
                                 "filetype",      "flex_bg",       "has_journal",
                                 "huge_file",     "inline_data",   "large_dir",
                                 "large_file",    "metadata_csum", "metadata_csum_seed",
                                 "mmp",           "orphan_file",   "project",
                                 "quota",         "resize_inode",  "sparse_super",
                                 "sparse_super2", "stable_inodes", "uninit_bg",
                                 "verity"}},
    {'T', Value::kWord, {}, {"default", "floppy", "small", "big", "huge", "news", "largefile", "largefile4"}},
};

// mkfs.xfs(8).
const Option kXfs[] = {
    {'K', Value::kNone},
    {'b', Value::kSubopts, {{"size", Value::kSize}}},
    {'d',
     Value::kSubopts,
     {{"agcount", Value::kNumber},
      {"agsize", Value::kSize},
      {"su", Value::kSize},
      {"sunit", Value::kNumber},
      {"sw", Value::kNumber},
      {"swidth", Value::kNumber},
      {"noalign", Value::kFlag},
      {"cowextsize", Value::kNumber},
      {"extszinherit", Value::kNumber}}},
    {'i',
     Value::kSubopts,
     {{"size", Value::kSize},
      {"maxpct", Value::kNumber},
      {"align", Value::kBool},
      {"attr", Value::kWord, {"1", "2"}},
      {"projid32bit", Value::kBool},
      {"sparse", Value::kBool},
      {"nrext64", Value::kBool}}},
    {'l',
     Value::kSubopts,
     {{"size", Value::kSize},
      {"version", Value::kWord, {"1", "2"}},
      {"su", Value::kSize},
      {"sunit", Value::kNumber},
      {"lazy-count", Value::kBool}}},
    {'L', Value::kLabel},
    {'m',
     Value::kSubopts,
     {{"crc", Value::kBool},
      {"finobt", Value::kBool},
      {"rmapbt", Value::kBool},
      {"reflink", Value::kBool},
      {"bigtime", Value::kBool},
      {"inobtcount", Value::kBool}}},
    {'n', Value::kSubopts, {{"size", Value::kSize}, {"version", Value::kWord, {"2", "ci"}}, {"ftype", Value::kBool}}},
    {'s', Value::kSubopts, {{"size", Value::kSize}}},
};

constexpr size_t kMaxNumberDigits = 19;  // fits an int64

bool Digits(std::string_view v) {
  return !v.empty() && v.size() <= kMaxNumberDigits &&
         std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool In(std::string_view v, std::initializer_list<std::string_view> words) {
  return std::find(words.begin(), words.end(), v) != words.end();
}

// Whether `v` is a value of kind `kind`; sub-option lists are checked by the caller.
bool ValueIs(Value kind, std::string_view v, std::initializer_list<std::string_view> words) {
  switch (kind) {
    case Value::kNumber:
      return Digits(v);
    case Value::kPercent: {
      size_t dot = v.find('.');
      return Digits(v.substr(0, dot)) && (dot == std::string_view::npos || Digits(v.substr(dot + 1)));
    }
    case Value::kSize:
      if (!v.empty() && std::string_view("bskmgtKMGT").find(v.back()) != std::string_view::npos) v.remove_suffix(1);
      return Digits(v);
    case Value::kBool:
      return v == "0" || v == "1";
    case Value::kLabel:
      return !v.empty() && v.size() <= 12 && std::all_of(v.begin(), v.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
      });
    case Value::kOwner: {
      size_t colon = v.find(':');
      return colon != std::string_view::npos && Digits(v.substr(0, colon)) && Digits(v.substr(colon + 1));
    }
    case Value::kWord:
      return In(v, words);
    default:
      return false;
  }
}

// Splits on `sep`, keeping empty parts (each is then refused).
std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (size_t start = 0;;) {
    size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

Status Refuse(const std::string& what, std::string_view why) {
  return Status::InvalidArgument("mkfsOptions: " + what + " " + std::string(why));
}

Status CheckSubopts(const Option& option, std::string_view list) {
  const std::string flag = std::string("-") + option.letter;
  for (std::string_view item : Split(list, ',')) {
    size_t eq = item.find('=');
    std::string_view name = item.substr(0, eq);
    auto it =
        std::find_if(option.subopts.begin(), option.subopts.end(), [name](const Subopt& s) { return s.name == name; });
    if (it == option.subopts.end()) {
      return Refuse(flag + " " + QuoteField(item), "is not a sub-option nbdkeeper allows");
    }
    bool has_value = eq != std::string_view::npos;
    std::string_view value = has_value ? item.substr(eq + 1) : std::string_view();
    bool ok = it->value == Value::kFlag      ? !has_value
              : it->value == Value::kOptBool ? (!has_value || value == "0" || value == "1")
                                             : has_value && ValueIs(it->value, value, it->words);
    if (!ok) return Refuse(flag + " " + QuoteField(item), "has a value nbdkeeper does not allow");
  }
  return Status::Ok();
}

Status CheckValue(const Option& option, std::string_view value) {
  const std::string shown = std::string("-") + option.letter + " " + QuoteField(value);
  switch (option.value) {
    case Value::kSubopts:
      return CheckSubopts(option, value);
    case Value::kFeatures:
      for (std::string_view feature : Split(value, ',')) {
        if (feature.starts_with('^')) feature.remove_prefix(1);
        if (!In(feature, option.words)) {
          return Refuse(shown + ":", QuoteField(feature) + " is not a feature nbdkeeper allows");
        }
      }
      return Status::Ok();
    default:
      if (ValueIs(option.value, value, option.words)) return Status::Ok();
      return Refuse(shown, "is not a value nbdkeeper allows");
  }
}

}  // namespace

std::vector<std::string> DefaultMkfsOptions(std::string_view fs_type) {
  if (fs_type == "ext4") return {"-m0", "-Enodiscard,lazy_itable_init=1,lazy_journal_init=1"};
  if (fs_type == "xfs") return {"-K"};
  return {};
}

Result<std::vector<std::string>> MkfsOptions(std::string_view fs_type, std::string_view text) {
  std::span<const Option> options;
  if (fs_type == "ext4") {
    options = kExt4;
  } else if (fs_type == "xfs") {
    options = kXfs;
  } else {
    return Status::InvalidArgument("mkfsOptions: no options for filesystem type " + QuoteField(fs_type));
  }
  if (text.empty()) return DefaultMkfsOptions(fs_type);
  std::vector<std::string_view> words;
  for (std::string_view w : Split(text, ' ')) {
    if (!w.empty()) words.push_back(w);
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < words.size(); ++i) {
    std::string_view word = words[i];
    const Option* option = nullptr;
    if (word.size() >= 2 && word[0] == '-') {
      auto it = std::find_if(options.begin(), options.end(), [&](const Option& o) { return o.letter == word[1]; });
      if (it != options.end()) option = &*it;
    }
    if (option == nullptr) {
      return Refuse(QuoteField(word), "is not an option nbdkeeper allows for " + std::string(fs_type));
    }
    out.push_back(std::string(word.substr(0, 2)));
    std::string_view attached = word.substr(2);
    if (option->value == Value::kNone) {
      if (!attached.empty()) return Refuse(QuoteField(word), "takes no value");
      continue;
    }
    std::string_view value = attached;
    if (value.empty()) {
      if (i + 1 == words.size()) return Refuse(std::string(word), "needs a value");
      value = words[++i];
    }
    NBDK_RETURN_IF_ERROR(CheckValue(*option, value));
    out.emplace_back(value);
  }
  if (out.empty()) return Status::InvalidArgument("mkfsOptions: only spaces");
  return out;
}

}  // namespace nbdk
