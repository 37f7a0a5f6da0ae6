// The character rule the rooms' parsers share for a value that becomes a
// file name, an argv token, an omap key or a line of a file: one
// definition, so that the rooms cannot drift apart.
#pragma once

#include <optional>
#include <string_view>

namespace nbdk {

// True when `s` holds ASCII whitespace (' ', \t, \n, \v, \f, \r) or an
// ASCII control byte (0x00-0x1f, 0x7f). Bytes from 0x80 up are neither,
// whatever the locale.
constexpr bool HasSpaceOrControl(std::string_view s) {
  for (char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) return true;
  }
  return false;
}

// Go's strconv.ParseBool, which ceph-csi reads its boolean parameters and
// volume context keys with: "1", "t", "T", "true", "TRUE", "True" and the
// false spellings; nullopt for anything else.
constexpr std::optional<bool> GoBool(std::string_view v) {
  if (v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE" || v == "True") return true;
  if (v == "0" || v == "f" || v == "F" || v == "false" || v == "FALSE" || v == "False") return false;
  return std::nullopt;
}

}  // namespace nbdk
