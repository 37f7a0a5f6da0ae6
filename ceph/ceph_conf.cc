#include "ceph/ceph_conf.h"

#include <cctype>
#include <cerrno>
#include <fstream>
#include <sstream>

#include "base/quote_field.h"

namespace nbdk {
namespace {

constexpr std::string_view kSpace = " \t\r\f\v";

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

bool IsCommentOrEmpty(std::string_view rest) {
  rest = Trim(rest);
  return rest.empty() || rest.front() == '#' || rest.front() == ';';
}

// Ceph treats ' ', '-' and '_' in a setting's name alike.
std::string NormalName(std::string_view name) {
  std::string out;
  for (char c : name) {
    bool sep = c == ' ' || c == '\t' || c == '-' || c == '_';
    if (!sep)
      out += c;
    else if (out.empty() || out.back() != '_')
      out += '_';
  }
  return out;
}

// A value: "quoted" with \" and \\ escapes, or up to a comment.
Result<std::string> ParseValue(std::string_view text) {
  text = Trim(text);
  if (text.empty() || text.front() != '"') {
    size_t comment = text.find_first_of("#;");
    return std::string(Trim(text.substr(0, comment)));
  }
  std::string out;
  for (size_t i = 1; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size() && (text[i + 1] == '"' || text[i + 1] == '\\')) {
      out += text[++i];
    } else if (c == '"') {
      if (!IsCommentOrEmpty(text.substr(i + 1))) return Status::InvalidArgument("text after the closing quote");
      return out;
    } else {
      out += c;
    }
  }
  return Status::InvalidArgument("unterminated quote");
}

}  // namespace

std::string CephConf::Get(std::string_view name, std::string_view user_id) const {
  std::string key = NormalName(name);
  for (const std::string& section : {"client." + std::string(user_id), std::string("client"), std::string("global")}) {
    auto s = sections_.find(section);
    if (s == sections_.end()) continue;
    auto v = s->second.find(key);
    if (v != s->second.end()) return v->second;
  }
  return "";
}

Result<CephConf> ParseCephConf(std::string_view text, const std::string& where) {
  std::map<std::string, CephConf::Section> sections;
  CephConf::Section* current = nullptr;
  std::istringstream in{std::string(text)};
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    int first = ++number;
    // A trailing backslash joins the next line to this one.
    for (std::string next; !line.empty() && line.back() == '\\' && std::getline(in, next); ++number) {
      line.pop_back();
      line += next;
    }
    auto fail = [&](const std::string& what) {
      return Status::InvalidArgument(where + ": line " + std::to_string(first) + ": " + what);
    };
    std::string_view l = Trim(line);
    if (IsCommentOrEmpty(l)) continue;
    if (l.front() == '[') {
      size_t close = l.find(']');
      if (close == std::string_view::npos) return fail("unterminated section header " + QuoteField(l));
      std::string name(Trim(l.substr(1, close - 1)));
      if (name.empty()) return fail("empty section name");
      if (!IsCommentOrEmpty(l.substr(close + 1))) return fail("text after the section header");
      current = &sections[name];
      continue;
    }
    size_t eq = l.find('=');
    if (eq == std::string_view::npos || Trim(l.substr(0, eq)).empty()) {
      return fail("expected 'name = value' or '[section]', got " + QuoteField(l));
    }
    if (current == nullptr) return fail("a setting before the first [section]");
    auto value = ParseValue(l.substr(eq + 1));
    if (!value.ok()) return fail(value.status().message());
    (*current)[NormalName(Trim(l.substr(0, eq)))] = *value;
  }
  return CephConf(std::move(sections));
}

Result<CephConf> LoadCephConf(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::FromErrno(errno, "read " + path);
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Unavailable(path + ": read failed");
  return ParseCephConf(text.str(), path);
}

namespace {

// "[v2:a:3300/0,v1:a:6789/0]" -> "a:6789/0"; anything else as it is.
std::string OneAddress(std::string token) {
  if (token.size() < 2 || token.front() != '[' || token.back() != ']') return token;
  std::string_view inside(token);
  inside = inside.substr(1, inside.size() - 2);
  std::string first;
  size_t start = 0;
  while (start <= inside.size()) {
    size_t end = inside.find(',', start);
    if (end == std::string_view::npos) end = inside.size();
    std::string_view addr = inside.substr(start, end - start);
    start = end + 1;
    // "", "v1:" or "v2:" with nothing after it is no address.
    if (addr.empty() || ((addr.starts_with("v1:") || addr.starts_with("v2:")) && addr.size() == 3)) continue;
    if (addr.starts_with("v1:")) return std::string(addr.substr(3));
    if (first.empty()) first = addr;
  }
  return first.empty() ? token : first;
}

}  // namespace

std::vector<std::string> SplitMonHost(std::string_view mon_host) {
  std::vector<std::string> out;
  std::string token;
  int depth = 0;
  for (char c : mon_host) {
    if (c == '[') ++depth;
    if (c == ']' && depth > 0) --depth;
    if (depth == 0 && (c == ',' || c == ';' || kSpace.find(c) != std::string_view::npos)) {
      if (!token.empty()) out.push_back(OneAddress(std::move(token)));
      token.clear();
      continue;
    }
    token += c;
  }
  if (!token.empty()) out.push_back(OneAddress(std::move(token)));
  return out;
}

std::vector<std::string> DefaultKeyrings(const std::string& cluster, const std::string& user_id) {
  return {"/etc/ceph/" + cluster + ".client." + user_id + ".keyring", "/etc/ceph/" + cluster + ".keyring",
          "/etc/ceph/keyring"};
}

Result<std::string> ExpandCephMeta(std::string_view value, const std::string& cluster, const std::string& user_id) {
  const std::map<std::string, std::string, std::less<>> vars = {
      {"cluster", cluster}, {"type", "client"}, {"id", user_id}, {"name", "client." + user_id}};
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '$') {
      out += value[i];
      continue;
    }
    bool braced = i + 1 < value.size() && value[i + 1] == '{';
    size_t start = i + (braced ? 2 : 1), end = start;
    while (end < value.size() && (std::isalnum(static_cast<unsigned char>(value[end])) || value[end] == '_')) ++end;
    std::string_view name = value.substr(start, end - start);
    auto it = vars.find(name);
    if (it == vars.end() || (braced && (end >= value.size() || value[end] != '}'))) {
      return Status::InvalidArgument(QuoteField(value) + ": only $cluster, $type, $id and $name are expanded here");
    }
    out += it->second;
    i = end - (braced ? 0 : 1);
  }
  return out;
}

}  // namespace nbdk
