#include "ceph/ceph_address.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace nbdk {
namespace {

std::vector<std::string> IpsOf(std::string_view addr) {
  Result<std::vector<std::string>> ips = CephAddressIps(addr);
  EXPECT_TRUE(ips.ok()) << addr << ": " << ips.status().ToString();
  return ips.ok() ? ips.value() : std::vector<std::string>{};
}

TEST(CanonicalIpTest, NormalisesBothFamilies) {
  EXPECT_EQ(CanonicalIp("10.0.0.1").value(), "10.0.0.1");
  EXPECT_EQ(CanonicalIp("::1").value(), "::1");
  EXPECT_EQ(CanonicalIp("0:0:0:0:0:0:0:1").value(), "::1");
  EXPECT_EQ(CanonicalIp("FD00::0002").value(), "fd00::2");
  EXPECT_EQ(CanonicalIp("::ffff:192.0.2.7").value(), "192.0.2.7");
  EXPECT_EQ(CanonicalIp("fe80::1%eth0").value(), "fe80::1");
}

TEST(CanonicalIpTest, RejectsWhatIsNotAnIp) {
  for (std::string_view bad : {"", "localhost", "10.0.0", "300.1.1.1", "10.0.0.1:80", "[::1]", "::g", " 10.0.0.1"}) {
    Result<std::string> ip = CanonicalIp(bad);
    ASSERT_FALSE(ip.ok()) << bad;
    EXPECT_EQ(ip.status().code(), Code::kInvalidArgument);
  }
  EXPECT_FALSE(CanonicalIp(std::string_view("10.0.0.1\0junk", 13)).ok());
}

TEST(CephAddressIpsTest, ParsesEveryPrintedForm) {
  EXPECT_EQ(IpsOf("127.0.0.1:0/123456"), std::vector<std::string>{"127.0.0.1"});
  EXPECT_EQ(IpsOf("v1:10.0.0.1:6789/0"), std::vector<std::string>{"10.0.0.1"});
  EXPECT_EQ(IpsOf("v2:10.0.0.1:3300/0"), std::vector<std::string>{"10.0.0.1"});
  EXPECT_EQ(IpsOf("any:10.0.0.9:0/42"), std::vector<std::string>{"10.0.0.9"});
  EXPECT_EQ(IpsOf("[::1]:6800/0"), std::vector<std::string>{"::1"});
  EXPECT_EQ(IpsOf("v2:[fd00::2]:3300/0"), std::vector<std::string>{"fd00::2"});
  EXPECT_EQ(IpsOf("10.0.0.1:6789"), std::vector<std::string>{"10.0.0.1"});
  EXPECT_EQ(IpsOf("10.0.0.1"), std::vector<std::string>{"10.0.0.1"});
  EXPECT_EQ(IpsOf("[v2:10.0.0.1:3300/0,v1:10.0.0.1:6789/0]"), (std::vector<std::string>{"10.0.0.1", "10.0.0.1"}));
  EXPECT_EQ(IpsOf("[v2:[::1]:3300/0,v1:[::1]:6789/0]"), (std::vector<std::string>{"::1", "::1"}));
  EXPECT_EQ(IpsOf("[v1:10.0.0.2:6789/0]"), std::vector<std::string>{"10.0.0.2"});
}

TEST(CephAddressIpsTest, GarbageIsAClearErrorNamingTheAddress) {
  const std::vector<std::string> garbage = {
      "",
      "-",
      "garbage",
      "10.0.0.1:",
      "10.0.0.1:99999/0",
      "10.0.0.1:80/abc",
      "10.0.0.1:80/",
      "10.0.0.1:-1/0",
      "[::1",
      "[::1]x/0",
      "[]:0/0",
      "::1:0/1",  // IPv6 must be bracketed
      "v3:10.0.0.1:6789/0",
      "300.0.0.1:0/1",
      "[v2:10.0.0.1:3300/0,]",
      "[v2:10.0.0.1:3300/0,,v1:10.0.0.1:6789/0]",
      "[v2:10.0.0.1:3300/0,nonsense]",
      "/",
      ":",
      std::string("10.0.0.1\0:0/1", 13),
      std::string(10000, '['),
      std::string(10000, '9'),
  };
  for (const std::string& addr : garbage) {
    Result<std::vector<std::string>> ips = CephAddressIps(addr);
    ASSERT_FALSE(ips.ok()) << "accepted: " << addr.substr(0, 40);
    EXPECT_EQ(ips.status().code(), Code::kInvalidArgument);
    EXPECT_NE(ips.status().message().find("ceph address"), std::string::npos) << ips.status().message();
    EXPECT_FALSE(IsLocalAddress(addr, {"10.0.0.1", "::1"})) << addr.substr(0, 40);
  }
}

TEST(IsLocalAddressTest, LoopbackIsAlwaysLocal) {
  EXPECT_TRUE(IsLocalAddress("127.0.0.1:0/123456", {}));
  EXPECT_TRUE(IsLocalAddress("127.5.6.7:0/1", {}));
  EXPECT_TRUE(IsLocalAddress("[::1]:6800/0", {}));
  EXPECT_TRUE(IsLocalAddress("v2:[::1]:3300/0", {}));
}

TEST(IsLocalAddressTest, HostAddressesAreLocalOthersAreNot) {
  const std::vector<std::string> host = {"127.0.0.1", "192.0.2.2", "fd00::2", "fe80::fc:ff:fe00:1"};
  EXPECT_TRUE(IsLocalAddress("192.0.2.2:0/3581423058", host));
  EXPECT_TRUE(IsLocalAddress("v1:192.0.2.2:0/1", host));
  EXPECT_TRUE(IsLocalAddress("[fd00::2]:0/77", host));
  EXPECT_TRUE(IsLocalAddress("[FD00:0::2]:0/77", host));
  EXPECT_TRUE(IsLocalAddress("[fe80::fc:ff:fe00:1%eth0]:0/1", host));
  EXPECT_TRUE(IsLocalAddress("[::ffff:192.0.2.2]:0/5", host));
  EXPECT_TRUE(IsLocalAddress("[v2:192.0.2.2:3300/0,v1:192.0.2.2:6789/0]", host));

  EXPECT_FALSE(IsLocalAddress("192.0.2.3:0/3581423058", host));
  EXPECT_FALSE(IsLocalAddress("10.0.0.1:0/1", host));
  EXPECT_FALSE(IsLocalAddress("[fd00::3]:0/1", host));
  // One foreign item makes the whole vector foreign.
  EXPECT_FALSE(IsLocalAddress("[v2:192.0.2.2:3300/0,v1:192.0.2.9:6789/0]", host));
}

TEST(IsLocalAddressTest, UnspecifiedAddressIsNeverLocal) {
  EXPECT_FALSE(IsLocalAddress("0.0.0.0:0/1", {"0.0.0.0"}));
  EXPECT_FALSE(IsLocalAddress("[::]:0/1", {"::"}));
}

TEST(IsLocalAddressTest, BadHostEntriesAreIgnored) {
  EXPECT_TRUE(IsLocalAddress("192.0.2.2:0/1", {"", "nonsense", "192.0.2.2"}));
  EXPECT_FALSE(IsLocalAddress("192.0.2.2:0/1", {"", "nonsense", "192.0.2.2:0"}));
}

TEST(HostIpAddressesTest, ListsTheLoopbackAddress) {
  Result<std::vector<std::string>> ips = HostIpAddresses();
  ASSERT_TRUE(ips.ok()) << ips.status().ToString();
  // Every test machine has lo up (the VM harness brings it up too).
  EXPECT_NE(std::find(ips->begin(), ips->end(), "127.0.0.1"), ips->end());
  for (const std::string& ip : *ips) EXPECT_TRUE(CanonicalIp(ip).ok()) << ip;
}

TEST(CephClientTest, TextRoundTripsAndNamesWhatIsWrong) {
  for (const char* text : {"client.4123@127.0.0.1:0/3440592934", "client.0@[::1]:0/7", "client.9@10.0.0.2:0/1"}) {
    Result<CephClient> c = ParseCephClient(text);
    ASSERT_TRUE(c.ok()) << text << ": " << c.status().ToString();
    EXPECT_EQ(c->ToString(), text);
  }
  EXPECT_EQ(ParseCephClient("client.4123@127.0.0.1:0/3440592934")->entity, "client.4123");
  EXPECT_EQ(ParseCephClient("client.4123@127.0.0.1:0/3440592934")->addr, "127.0.0.1:0/3440592934");
  const std::pair<const char*, const char*> bad[] = {
      {"client.4123", "expected <entity>@<address>"},
      {"osd.1@127.0.0.1:0/1", "entity is not client.<id>"},
      {"client.@127.0.0.1:0/1", "entity is not client.<id>"},
      {"client.1@v1:127.0.0.1:0/1", "not one legacy address"},
      {"client.1@[v2:127.0.0.1:0/1,v1:127.0.0.1:0/1]", "not one legacy address"},
      {"client.1@127.0.0.1:0", "no /nonce"},
      {"client.1@nonsense:0/1", "is not an IP address"},
      {"client.1@", "not one legacy address"},
  };
  for (const auto& [text, why] : bad) {
    Result<CephClient> c = ParseCephClient(text);
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_EQ(c.status().code(), Code::kInvalidArgument);
    EXPECT_NE(c.status().message().find(why), std::string::npos) << text << ": " << c.status().message();
  }
}

TEST(CephClientTest, LegacyAddressDropsOnlyTheType) {
  EXPECT_EQ(LegacyCephAddress("v1:127.0.0.1:0/5"), "127.0.0.1:0/5");
  EXPECT_EQ(LegacyCephAddress("v2:[::1]:3300/0"), "[::1]:3300/0");
  EXPECT_EQ(LegacyCephAddress("any:10.0.0.1:0/1"), "10.0.0.1:0/1");
  EXPECT_EQ(LegacyCephAddress("10.0.0.1:0/1"), "10.0.0.1:0/1");
}

}  // namespace
}  // namespace nbdk
