#include "csi/map_options.h"

#include <strings.h>

#include <cctype>

#include "base/quote_field.h"
#include "supervisor/rbd_nbd_options.h"

namespace nbdk {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

Result<std::string> NbdOptionSection(std::string_view value) {
  std::string nbd;
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(';', start);
    if (end == std::string_view::npos) end = value.size();
    std::string_view section = value.substr(start, end - start);
    start = end + 1;
    size_t colon = section.find(':');
    if (section.empty() || colon == std::string_view::npos) continue;  // empty, or krbd's
    std::string mounter(Trim(section.substr(0, colon)));
    if (::strcasecmp(mounter.c_str(), "nbd") == 0) {
      nbd = std::string(Trim(section.substr(colon + 1)));
    } else if (::strcasecmp(mounter.c_str(), "krbd") != 0) {
      return Status::InvalidArgument("unknown mounter type " + QuoteField(mounter) + " (expected krbd or nbd)");
    }
  }
  return nbd;
}

Result<std::vector<std::string>> MapOptionArguments(std::string_view value, bool snapshot) {
  auto section = NbdOptionSection(value);
  if (!section.ok()) return section.status();
  auto args = ParseRbdNbdOptions(*section);
  if (!args.ok() || !snapshot) return args;
  NBDK_RETURN_IF_ERROR(CheckSnapshotMapOptions(*args));
  return args;
}

Result<std::string> UnmapOptionsCsv(std::string_view value) {
  auto section = NbdOptionSection(value);
  if (!section.ok()) return section.status();
  for (char c : *section) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("_-=,.").find(c) == std::string_view::npos) {
      return Status::InvalidArgument("only letters, digits and '_-=,.' are allowed");
    }
  }
  return section;
}

}  // namespace nbdk
