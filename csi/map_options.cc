#include "csi/map_options.h"

#include <strings.h>

#include <cctype>

namespace nbdk {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_'; }

bool ValidName(std::string_view name) {
  if (name.empty() || !std::isalnum(static_cast<unsigned char>(name.front()))) return false;
  for (char c : name) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

bool IsZero(std::string_view digits) {
  if (digits.empty()) return false;
  for (char c : digits) {
    if (c != '0') return false;
  }
  return true;
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
      return Status::InvalidArgument("unknown mounter type '" + mounter + "' (expected krbd or nbd)");
    }
  }
  return nbd;
}

Result<std::vector<std::string>> NbdOptionArgs(std::string_view csv) {
  std::vector<std::string> args;
  size_t start = 0;
  while (start <= csv.size()) {
    size_t end = csv.find(',', start);
    if (end == std::string_view::npos) end = csv.size();
    std::string_view option = Trim(csv.substr(start, end - start));
    start = end + 1;
    if (option.starts_with("--")) option.remove_prefix(2);
    if (option.empty()) continue;

    size_t eq = option.find('=');
    std::string_view name = option.substr(0, eq);
    if (!ValidName(name)) {
      return Status::InvalidArgument("option '" + std::string(name) + "': not an rbd-nbd option name");
    }
    if (eq != std::string_view::npos) {
      std::string_view value = option.substr(eq + 1);
      if (value.empty()) return Status::InvalidArgument("option '" + std::string(name) + "': empty value");
      for (char c : value) {
        if (std::isspace(static_cast<unsigned char>(c)) || std::iscntrl(static_cast<unsigned char>(c))) {
          return Status::InvalidArgument("option '" + std::string(name) +
                                         "': value contains whitespace or a control character");
        }
      }
    }
    if (name == "io-timeout" || name == "timeout") {
      std::string_view value = eq == std::string_view::npos ? std::string_view() : option.substr(eq + 1);
      if (!IsZero(value)) {
        return Status::InvalidArgument(
            "option '" + std::string(name) +
            "': only 0 is allowed: with a timeout, a Ceph stall longer than it fails all I/O on the device "
            "with EIO; nbdkeeper manages the block queue timeout itself");
      }
    }
    args.push_back("--" + std::string(option));
  }
  return args;
}

}  // namespace nbdk
