#include "ceph/ceph_address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace nbdk {
namespace {

bool AllDigits(std::string_view s, size_t max_len) {
  return !s.empty() && s.size() <= max_len &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string Ntop(int family, const void* addr) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(family, addr, buf, sizeof(buf)) == nullptr) return {};
  return buf;
}

// One entity_addr_t: "[type:]host[:port][/nonce]" -> canonical IP.
Result<std::string> ParseOneAddress(std::string_view addr) {
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("ceph address '" + std::string(addr) + "': " + std::string(why));
  };
  const std::string legacy = LegacyCephAddress(addr);
  std::string_view s = legacy;
  if (size_t slash = s.rfind('/'); slash != std::string_view::npos) {
    if (!AllDigits(s.substr(slash + 1), 20)) return bad("nonce after '/' is not a number");
    s = s.substr(0, slash);
  }
  std::string_view host, port;
  if (!s.empty() && s.front() == '[') {
    size_t close = s.find(']');
    if (close == std::string_view::npos) return bad("'[' without ']'");
    host = s.substr(1, close - 1);
    std::string_view rest = s.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return bad("unexpected text after ']'");
      port = rest.substr(1);
      if (port.empty()) return bad("empty port");
    }
  } else if (size_t colon = s.rfind(':'); colon != std::string_view::npos) {
    host = s.substr(0, colon);
    port = s.substr(colon + 1);
    if (port.empty()) return bad("empty port");
    // "::1:0" could be an address or an address and a port: Ceph brackets.
    if (host.find(':') != std::string_view::npos) return bad("an IPv6 address must be in brackets");
  } else {
    host = s;
  }
  if (!port.empty() && (!AllDigits(port, 5) || std::stoul(std::string(port)) > 65535)) {
    return bad("port is not a number in 0..65535");
  }
  if (host.empty()) return bad("no IP address");
  Result<std::string> ip = CanonicalIp(host);
  if (!ip.ok()) return bad("'" + std::string(host) + "' is not an IP address");
  return ip;
}

bool IsLoopback(const std::string& canonical_ip) { return canonical_ip == "::1" || canonical_ip.rfind("127.", 0) == 0; }

bool IsUnspecified(const std::string& canonical_ip) { return canonical_ip == "0.0.0.0" || canonical_ip == "::"; }

}  // namespace

Result<std::string> CanonicalIp(std::string_view ip) {
  // inet_pton would stop at an embedded NUL and accept the prefix.
  if (ip.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument("IP address contains a NUL byte");
  }
  std::string text(ip);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return Ntop(AF_INET, &v4);
  if (size_t zone = text.find('%'); zone != std::string::npos) text.resize(zone);
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_V4MAPPED(&v6)) {
      std::memcpy(&v4, &v6.s6_addr[12], sizeof(v4));
      return Ntop(AF_INET, &v4);
    }
    return Ntop(AF_INET6, &v6);
  }
  return Status::InvalidArgument("'" + std::string(ip) + "' is not an IPv4 or IPv6 address");
}

Result<std::vector<std::string>> CephAddressIps(std::string_view ceph_addr) {
  if (ceph_addr.empty()) return Status::InvalidArgument("ceph address: empty");
  if (std::any_of(ceph_addr.begin(), ceph_addr.end(),
                  [](char c) { return static_cast<unsigned char>(c) <= ' ' || c == 0x7f; })) {
    return Status::InvalidArgument("ceph address: contains a space or control character");
  }
  std::string_view s = ceph_addr;
  std::vector<std::string_view> parts;
  // An address vector is bracketed and its items are typed ("[v2:...,v1:...]");
  // a bracketed IPv6 item is not followed by the closing bracket of a vector.
  bool is_vector = s.front() == '[' && s.back() == ']' &&
                   (s.substr(1, 3) == "v1:" || s.substr(1, 3) == "v2:" || s.substr(1, 4) == "any:");
  if (is_vector) {
    s = s.substr(1, s.size() - 2);
    while (!s.empty()) {
      size_t comma = s.find(',');
      parts.push_back(s.substr(0, comma));
      if (comma == std::string_view::npos) break;
      s.remove_prefix(comma + 1);
      if (s.empty()) parts.push_back(s);  // trailing comma: an empty item
    }
  } else {
    parts.push_back(s);
  }
  std::vector<std::string> ips;
  for (std::string_view part : parts) {
    if (part.empty()) {
      return Status::InvalidArgument("ceph address '" + std::string(ceph_addr) + "': empty item in vector");
    }
    Result<std::string> ip = ParseOneAddress(part);
    if (!ip.ok()) return ip.status();
    ips.push_back(std::move(ip).value());
  }
  return ips;
}

bool IsLocalAddress(std::string_view ceph_addr, const std::vector<std::string>& host_ips) {
  Result<std::vector<std::string>> ips = CephAddressIps(ceph_addr);
  if (!ips.ok() || ips->empty()) return false;
  std::vector<std::string> host;
  for (const auto& h : host_ips) {
    Result<std::string> canonical = CanonicalIp(h);
    if (canonical.ok()) host.push_back(std::move(canonical).value());
  }
  for (const std::string& ip : *ips) {
    if (IsUnspecified(ip)) return false;
    if (!IsLoopback(ip) && std::find(host.begin(), host.end(), ip) == host.end()) return false;
  }
  return true;
}

Result<std::vector<std::string>> HostIpAddresses() {
  ifaddrs* raw = nullptr;
  if (getifaddrs(&raw) != 0) return Status::FromErrno(errno, "list this host's addresses (getifaddrs)");
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> list(raw, freeifaddrs);
  std::vector<std::string> ips;
  for (ifaddrs* ifa = list.get(); ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr) continue;
    std::string ip;
    if (ifa->ifa_addr->sa_family == AF_INET) {
      ip = Ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(ifa->ifa_addr)->sin_addr);
    } else if (ifa->ifa_addr->sa_family == AF_INET6) {
      ip = Ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(ifa->ifa_addr)->sin6_addr);
    }
    if (ip.empty()) continue;
    Result<std::string> canonical = CanonicalIp(ip);
    if (canonical.ok()) ips.push_back(std::move(canonical).value());
  }
  return ips;
}

std::string LegacyCephAddress(std::string_view addr) {
  for (std::string_view prefix : {"v1:", "v2:", "any:"}) {
    if (addr.substr(0, prefix.size()) == prefix) return std::string(addr.substr(prefix.size()));
  }
  return std::string(addr);
}

Result<CephClient> ParseCephClient(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("ceph client '" + std::string(text.substr(0, 128)) + "': " + std::string(why));
  };
  size_t at = text.find('@');
  if (at == std::string_view::npos) return bad("expected <entity>@<address>");
  std::string_view entity = text.substr(0, at), addr = text.substr(at + 1);
  if (entity.substr(0, 7) != "client." || !AllDigits(entity.substr(7), 20)) return bad("entity is not client.<id>");
  bool typed = addr != LegacyCephAddress(addr);
  bool vector = addr.size() > 1 && addr.front() == '[' && addr.substr(1) != LegacyCephAddress(addr.substr(1));
  if (addr.empty() || typed || vector) return bad("address is not one legacy address");
  size_t slash = addr.rfind('/');
  if (slash == std::string_view::npos || !AllDigits(addr.substr(slash + 1), 20)) return bad("address has no /nonce");
  Result<std::vector<std::string>> ips = CephAddressIps(addr);
  if (!ips.ok()) return bad(ips.status().message());
  return CephClient{std::string(entity), std::string(addr)};
}

}  // namespace nbdk
