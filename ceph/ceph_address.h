// Ceph entity addresses as librbd and the OSDs print them, and the decision
// "does this address belong to this host?" that RbdLockBreaker rests on.
//
// Accepted forms (entity_addr_t and entity_addrvec_t as printed by Ceph):
//   127.0.0.1:0/123456            legacy/any client address, with nonce
//   v1:10.0.0.1:6789/0            typed (v1, v2, any)
//   [::1]:6800/0, v2:[::1]:3300/0 IPv6, always bracketed
//   [v2:10.0.0.1:3300/0,v1:10.0.0.1:6789/0]   an address vector
// The port and the "/nonce" are optional; when present they must be numbers.
//
// A client as the OSDs know it (CephClient) is its entity and its address
// together.
//
// Pure functions except HostIpAddresses(); any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace nbdk {

// The canonical text of an IP address ("10.0.0.1", "::1"); an IPv4-mapped
// IPv6 address becomes its IPv4 form and an IPv6 "%zone" is dropped.
// InvalidArgument when `ip` is not an IP address.
Result<std::string> CanonicalIp(std::string_view ip);

// The canonical IP of every address in `ceph_addr` (one for a single
// address). InvalidArgument naming the address and what is wrong with it.
Result<std::vector<std::string>> CephAddressIps(std::string_view ceph_addr);

// True when every IP in `ceph_addr` is this host's: a loopback address
// (127.0.0.0/8, ::1) or one of `host_ips` (compared canonically). False for
// an unparsable address, an unspecified IP (0.0.0.0, ::) and anything else:
// "not provably local" is never local.
bool IsLocalAddress(std::string_view ceph_addr, const std::vector<std::string>& host_ips);

// The canonical IPs of every interface of this host (getifaddrs), loopback
// included. IoError when the interfaces cannot be listed.
Result<std::vector<std::string>> HostIpAddresses();

// `addr` without its type prefix ("v1:", "v2:", "any:"): the legacy form in
// which librbd names watchers and lock owners.
std::string LegacyCephAddress(std::string_view addr);

// One client session of a cluster: its entity ("client.4123", the global
// id the monitors gave the session) and its address with nonce
// ("127.0.0.1:0/3440592934", legacy form). Two rbd-nbd processes on one
// host, or two hosts behind one NAT, differ here: an IP alone names no
// client.
struct CephClient {
  std::string entity;
  std::string addr;

  // "client.4123@127.0.0.1:0/3440592934": what the node journal keeps and
  // messages show.
  std::string ToString() const { return entity + "@" + addr; }
  auto operator<=>(const CephClient&) const = default;
};

// The inverse of CephClient::ToString. InvalidArgument naming what is wrong:
// the entity must be "client.<digits>", the address one legacy address with
// a "/nonce".
Result<CephClient> ParseCephClient(std::string_view text);

}  // namespace nbdk
