// Ceph entity addresses of lock owners, as the cluster reports them, and
// clients as the node journal keeps them (ceph/ceph_address.h): the
// IPs found are canonical; a parsed client prints back as it was read.
#include "ceph/ceph_address.h"
#include "test/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view address = nbdk::fuzz::Text(data, size);
  (void)nbdk::IsLocalAddress(address, {"10.0.0.1", "fd00::1"});
  if (auto client = nbdk::ParseCephClient(address); client.ok()) {
    NBDK_FUZZ_CHECK(client->ToString() == address);
  }
  auto ips = nbdk::CephAddressIps(address);
  if (!ips.ok()) return 0;
  for (const std::string& ip : *ips) {
    auto canonical = nbdk::CanonicalIp(ip);
    NBDK_FUZZ_CHECK(canonical.ok() && *canonical == ip);
  }
  return 0;
}
