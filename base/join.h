// Join: a list of strings as one, `separator` between its items - the one
// definition for the lists that the rooms write into messages and argv.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nbdk {

// {"a", "b"}, ", " -> "a, b"; {} -> "". A separator follows only a
// non-empty prefix, so leading empty items leave no separator behind.
inline std::string Join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

}  // namespace nbdk
