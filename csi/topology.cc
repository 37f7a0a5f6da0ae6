#include "csi/topology.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

#include "base/quote_field.h"

namespace nbdk {
namespace {

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// Kubernetes' "qualified name" part and label value: 1-63 of [A-Za-z0-9._-],
// alphanumeric at both ends.
bool IsLabelName(std::string_view s) {
  return !s.empty() && s.size() <= 63 && IsAlnum(s.front()) && IsAlnum(s.back()) &&
         std::all_of(s.begin(), s.end(), [](char c) { return IsAlnum(c) || c == '.' || c == '_' || c == '-'; });
}

// A DNS subdomain: at most 253 of [a-z0-9.-], dot-separated labels that
// begin and end alphanumeric.
bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (part.empty() || part.size() > 63 || !IsAlnum(part.front()) || !IsAlnum(part.back())) return false;
    for (char c : part) {
      if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
        return false;
      }
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The parts of `text` between `separator`s, each without the blanks around
// it; empty parts are kept (the callers skip them).
std::vector<std::string_view> Parts(std::string_view text, char separator) {
  std::vector<std::string_view> out;
  size_t from = 0;
  while (from <= text.size()) {
    size_t end = text.find(separator, from);
    if (end == std::string_view::npos) end = text.size();
    out.push_back(Trim(text.substr(from, end - from)));
    from = end + 1;
  }
  return out;
}

}  // namespace

std::string_view LabelName(std::string_view key) {
  size_t slash = key.find('/');
  return slash == std::string_view::npos ? key : key.substr(slash + 1);
}

Status CheckLabelKey(std::string_view key, std::string_view what) {
  size_t slash = key.find('/');
  bool ok = slash == std::string_view::npos
                ? IsLabelName(key)
                : IsDnsSubdomain(key.substr(0, slash)) && IsLabelName(key.substr(slash + 1));
  if (ok) return Status::Ok();
  return Status::InvalidArgument(std::string(what) + ": " + QuoteField(key) +
                                 " is not a label key ([prefix/]name, name 1-63 of [A-Za-z0-9._-])");
}

Result<NodeLabels> ParseNodeLabels(std::string_view text, std::string_view what) {
  NodeLabels out;
  for (std::string_view line : Parts(text, '\n')) {
    if (line.starts_with('#')) continue;
    for (std::string_view pair : Parts(line, ',')) {
      if (pair.empty()) continue;
      size_t eq = pair.find('=');
      if (eq == std::string_view::npos) {
        return Status::InvalidArgument(std::string(what) + ": " + QuoteField(pair) + " is not key=value");
      }
      std::string_view key = pair.substr(0, eq), value = pair.substr(eq + 1);
      NBDK_RETURN_IF_ERROR(CheckLabelKey(key, what));
      if (!value.empty() && !IsLabelName(value)) {
        return Status::InvalidArgument(std::string(what) + ": " + QuoteField(key) + ": " + QuoteField(value) +
                                       " is not a label value (1-63 of [A-Za-z0-9._-])");
      }
      if (!out.emplace(key, value).second) {
        return Status::InvalidArgument(std::string(what) + ": " + QuoteField(key) + " is given twice");
      }
    }
  }
  return out;
}

Result<std::vector<std::string>> ParseLabelKeys(std::string_view csv, std::string_view what) {
  std::vector<std::string> out;
  std::set<std::string_view> seen;
  for (std::string_view key : Parts(csv, ',')) {
    if (key.empty()) continue;
    NBDK_RETURN_IF_ERROR(CheckLabelKey(key, what));
    if (!seen.insert(key).second) {
      return Status::InvalidArgument(std::string(what) + ": " + QuoteField(key) + " is given twice");
    }
    out.emplace_back(key);
  }
  return out;
}

Result<TopologySegments> NodeTopology(const std::vector<std::string>& domain_labels, const NodeLabels& labels,
                                      std::string_view driver_name) {
  TopologySegments out;
  std::string missing;
  const std::string prefix = "topology." + std::string(driver_name) + "/";
  for (const std::string& key : domain_labels) {
    auto it = labels.find(key);
    if (it == labels.end()) {
      missing += (missing.empty() ? "" : ", ") + key;
      continue;
    }
    out[prefix + std::string(LabelName(key))] = it->second;
  }
  if (!missing.empty()) {
    return Status::InvalidArgument("the node has no label " + missing + " (a domain label must be one of its labels)");
  }
  return out;
}

std::map<std::string, std::string> CrushLocation(const std::vector<std::string>& crush_labels,
                                                 const NodeLabels& labels) {
  std::map<std::string, std::string> out;
  for (const std::string& key : crush_labels) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second.empty()) continue;
    std::string type(LabelName(key));
    if (type == "hostname") type = "host";  // Kubernetes' name for CRUSH's host
    std::string value = it->second;
    std::replace(value.begin(), value.end(), '.', '-');
    out[type] = value;
  }
  return out;
}

std::vector<std::string> ReadAffinityMapOptions(const std::map<std::string, std::string>& location) {
  if (location.empty()) return {};
  std::string pairs;
  for (const auto& [type, name] : location) pairs += (pairs.empty() ? "" : ";") + type + "=" + name;
  return {"--rbd_read_from_replica_policy=localize", "--crush_location=" + pairs};
}

std::vector<std::string> WithReadAffinity(std::vector<std::string> options,
                                          const std::vector<std::string>& read_affinity) {
  bool own = std::any_of(options.begin(), options.end(), [](const std::string& o) {
    return o.starts_with("--rbd_read_from_replica_policy=") || o.starts_with("--crush_location=");
  });
  if (!own) options.insert(options.end(), read_affinity.begin(), read_affinity.end());
  return options;
}

}  // namespace nbdk
