// CephConf: a ceph.conf as Ceph's own ConfFile reads it, for the settings a
// client needs to find its cluster and key without ceph-csi's config.json:
// fsid, mon_host and the key settings (key, keyfile, keyring).
//
// The format: "[section]" lines; "name = value" lines, where a name's
// spaces, '-' and '_' are one and the same ("mon host" is mon_host); '#'
// and ';' start a comment outside double quotes; a value may be "quoted"
// (\" and \\ escapes); a line ending in '\' continues on the next. A later
// setting in a section replaces an earlier one. A client named
// "client.ID" reads [client.ID], then [client], then [global].
//
// Pure except LoadCephConf; any thread. Errors name the file and line.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace nbdk {

class CephConf {
 public:
  using Section = std::map<std::string, std::string>;
  CephConf() = default;
  explicit CephConf(std::map<std::string, Section> sections) : sections_(std::move(sections)) {}

  // The value of `name` (normalised: "mon host" finds mon_host) for the
  // entity "client.<user_id>"; "" when no section searched sets it.
  std::string Get(std::string_view name, std::string_view user_id) const;

 private:
  std::map<std::string, Section> sections_;
};

// Parses `text`; `where` (the path) prefixes errors: "<where>: line 3:
// expected 'name = value'". Rejected: a line that is neither a section, a
// setting nor a comment; an unterminated section or quote; a setting before
// any section; text after a closing quote.
Result<CephConf> ParseCephConf(std::string_view text, const std::string& where);

// Reads and parses `path`. BLOCKING. NotFound when the file is missing.
Result<CephConf> LoadCephConf(const std::string& path);

// mon_host's monitors: split at ',', ';' and whitespace outside "[...]".
// An address vector (cephadm writes "[v2:a:3300/0,v1:a:6789/0]") becomes
// one address without a comma, as a monitor list passed on (rbd-nbd's
// --mon_host, librados) must be: its v1 address ("a:6789/0", which Ceph
// reads as msgr1, as every monitor still listens there by default), else
// its first ("v2:a:3300/0").
std::vector<std::string> SplitMonHost(std::string_view mon_host);

// Where librados looks for client.<user_id>'s key when nothing else names it
// (Ceph's keyring default), for cluster `cluster`.
std::vector<std::string> DefaultKeyrings(const std::string& cluster, const std::string& user_id);

// `value` with Ceph's metavariables $cluster, $type, $id and $name (and
// ${...}) replaced for client.<user_id>; InvalidArgument naming any other.
Result<std::string> ExpandCephMeta(std::string_view value, const std::string& cluster, const std::string& user_id);

}  // namespace nbdk
