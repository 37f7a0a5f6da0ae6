// The character rule the rooms' parsers share for a value that becomes a
// file name, an argv token, an omap key or a line of a file: one
// definition, so that the rooms cannot drift apart.
#pragma once

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

}  // namespace nbdk
