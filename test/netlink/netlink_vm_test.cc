// netlink_vm_test: NbdNetlink against a real kernel nbd driver, rbd-nbd and a
// one-node Ceph cluster. Runs only inside the test VM (nbd loaded with
// nbds_max=16), started by the VM harness, which exports:
//   CEPH_CONF, NBDK_TEST_POOL, NBDK_TEST_CLIENT_ID, NBDK_TEST_KEYFILE
// (or ceph-up.sh's NBDK_CEPH_POOL, NBDK_CEPH_ID, NBDK_CEPH_KEY_FILE).
// Nothing is skipped: a missing variable or tool is a failure saying so.
// Tests print what the kernel does ("[ kernel ]" lines) for the record.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "base/command.h"
#include "netlink/nbd_netlink.h"
#include "netlink/nbd_sysfs.h"
#include "test/common/vm_command.h"
#include "test/netlink/run_loop.h"

namespace nbdk {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using testing::RunLoop;
using vmtest::SpawnedChild;

constexpr int kExpectedDevices = 16;  // the harness loads nbd nbds_max=16

std::string DeviceName(int index) { return "/dev/nbd" + std::to_string(index); }

double MsSince(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double, std::milli>(end - start).count();
}

// Polls STATUS until /dev/nbd<index> reports disconnected or `limit` passes;
// returns the last status seen.
Result<NbdDeviceStatus> WaitDisconnected(NbdNetlink& nl, int index, milliseconds limit) {
  const auto give_up = Clock::now() + limit;
  for (;;) {
    auto status = nl.Status(index);
    if (!status.ok() || !status->connected || Clock::now() >= give_up) return status;
    std::this_thread::sleep_for(milliseconds(100));
  }
}

struct LinkDeadEvent {
  int index;
  Clock::time_point at;
};

TEST(NbdNetlinkVmTest, StatusListsSixteenDisconnectedDevices) {
  EventLoop loop;
  {
    auto nl = NbdNetlink::Open(loop);
    ASSERT_TRUE(nl.ok()) << nl.status().ToString();
    auto devices = (*nl)->Status();
    ASSERT_TRUE(devices.ok()) << devices.status().ToString();
    ASSERT_EQ(devices->size(), static_cast<size_t>(kExpectedDevices))
        << "the VM harness loads nbd with nbds_max=" << kExpectedDevices;
    std::set<int> indices;
    for (const NbdDeviceStatus& d : *devices) {
      indices.insert(d.index);
      EXPECT_FALSE(d.connected) << DeviceName(d.index) << " is connected before any map";
    }
    EXPECT_EQ(indices.size(), static_cast<size_t>(kExpectedDevices));
    EXPECT_EQ(*indices.begin(), 0);
    EXPECT_EQ(*indices.rbegin(), kExpectedDevices - 1);

    auto one = (*nl)->Status(kExpectedDevices - 1);
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    EXPECT_EQ(*one, (NbdDeviceStatus{kExpectedDevices - 1, false}));
    EXPECT_EQ((*nl)->Status(kExpectedDevices + 100).status().code(), Code::kNotFound);

    auto free_index = (*nl)->FindFreeDevice();
    ASSERT_TRUE(free_index.ok()) << free_index.status().ToString();
    EXPECT_EQ(*free_index, 0);
    EXPECT_EQ(ReadNbdBackendCookie(0).status().code(), Code::kNotFound);

    // The kernel acks a DISCONNECT of an idle device and rejects an unknown one.
    Status idle = (*nl)->Disconnect(kExpectedDevices - 1);
    std::cout << "[ kernel ] DISCONNECT of idle " << DeviceName(kExpectedDevices - 1) << ": " << idle.ToString()
              << "\n";
    EXPECT_TRUE(idle.ok()) << idle.ToString();
    Status unknown = (*nl)->Disconnect(4096);
    std::cout << "[ kernel ] DISCONNECT of /dev/nbd4096: " << unknown.ToString() << "\n";
    // EINVAL: the kernel's refusal of our message, an I/O error to callers.
    EXPECT_EQ(unknown.code(), Code::kIoError) << unknown.ToString();
    EXPECT_NE(unknown.message().find("Invalid argument"), std::string::npos) << unknown.ToString();
  }
  EXPECT_TRUE(loop.Shutdown().ok());
}

// Tests that map real images through rbd-nbd.
class NbdNetlinkCephTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Each setting under the name the brief gives, or the name test/vm's
    // ceph-up.sh writes to its env file.
    const std::pair<const char*, const char*> settings[] = {
        {"CEPH_CONF", "CEPH_CONF"},
        {"NBDK_TEST_POOL", "NBDK_CEPH_POOL"},
        {"NBDK_TEST_CLIENT_ID", "NBDK_CEPH_ID"},
        {"NBDK_TEST_KEYFILE", "NBDK_CEPH_KEY_FILE"},
    };
    std::string missing;
    for (const auto& [name, alias] : settings) {
      const char* value = std::getenv(name);
      if (value == nullptr || *value == '\0') value = std::getenv(alias);
      if (value == nullptr || *value == '\0') {
        missing += (missing.empty() ? "" : ", ") + std::string(name);
        if (std::string(alias) != name) missing += std::string(" (or ") + alias + ")";
      } else {
        env_[name] = value;
      }
    }
    ASSERT_TRUE(missing.empty()) << "environment variable(s) not set: " << missing
                                 << ". The VM harness must export the Ceph config, pool, "
                                    "client id and key file for netlink_vm_test.";
    auto nl = NbdNetlink::Open(loop_);
    ASSERT_TRUE(nl.ok()) << nl.status().ToString();
    nl_ = std::move(*nl);
  }

  void TearDown() override {
    nl_.reset();
    EXPECT_TRUE(loop_.Shutdown().ok());
    // Best effort: right after a kill -9 the dead client's watch keeps the
    // image busy for ~30 s, so a failure here is only reported.
    for (const std::string& image : images_) {
      auto rm = vmtest::RunCommand(WithCephArgs({"rbd", "rm", "--no-progress", Spec(image)}));
      if (!rm.ok() || rm->exit.code != 0) {
        std::cout << "[ cleanup ] rbd rm " << Spec(image) << ": "
                  << (rm.ok() ? rm->exit.ToString() : rm.status().ToString()) << "\n";
      }
    }
  }

  // `argv` plus the cluster arguments the harness provides.
  std::vector<std::string> WithCephArgs(std::vector<std::string> argv) {
    argv.insert(argv.end(), {"--conf", env_["CEPH_CONF"], "--id", env_["NBDK_TEST_CLIENT_ID"], "--keyfile",
                             env_["NBDK_TEST_KEYFILE"]});
    return argv;
  }

  std::string Spec(const std::string& image) { return env_["NBDK_TEST_POOL"] + "/" + image; }

  // Runs a command that must succeed.
  Status Run(const std::vector<std::string>& argv) {
    auto out = vmtest::RunCommand(argv);
    if (!out.ok()) return out.status();
    if (out->exit.code != 0) {
      return Status::Internal(vmtest::JoinArgv(argv) + ": " + out->exit.ToString());
    }
    return Status::Ok();
  }

  Status CreateImage(const std::string& image) {
    NBDK_RETURN_IF_ERROR(Run(WithCephArgs({"rbd", "create", "--size", "64M", Spec(image)})));
    images_.push_back(image);
    return Status::Ok();
  }

  // Maps `image` on /dev/nbd<index> with `cookie` through rbd-nbd in the
  // foreground (our child, so kill -9 hits the process serving the device).
  Result<SpawnedChild> Map(const std::string& image, int index, const std::string& cookie) {
    auto child =
        SpawnedChild::Spawn(WithCephArgs({"rbd-nbd", "map", "--try-netlink", "--device", DeviceName(index), "--cookie",
                                          cookie, "--show-cookie", "--reattach-timeout", "60", "-f", Spec(image)}));
    if (!child.ok()) return child.status();
    auto line = child->ReadLine(milliseconds(180000));
    if (!line.ok()) return line.status().WithContext("rbd-nbd map " + Spec(image));
    std::istringstream words(*line);
    std::string device, shown_cookie;
    words >> device >> shown_cookie;
    std::cout << "[ rbd-nbd ] map printed '" << *line << "'\n";
    if (device != DeviceName(index)) {
      return Status::Internal("rbd-nbd map printed '" + *line + "', expected " + DeviceName(index));
    }
    if (shown_cookie != cookie) {
      return Status::Internal("rbd-nbd map printed cookie '" + shown_cookie + "', expected " + cookie);
    }
    return std::move(*child);
  }

  std::string NewCookie() {
    std::ifstream uuid("/proc/sys/kernel/random/uuid");
    std::string cookie;
    uuid >> cookie;
    EXPECT_FALSE(cookie.empty()) << "cannot read /proc/sys/kernel/random/uuid";
    return cookie;
  }

  std::string ImageName(const char* what) {
    return std::string("nbdk-netlink-vm-") + what + "-" + std::to_string(getpid());
  }

  EventLoop loop_;
  std::unique_ptr<NbdNetlink> nl_;
  std::map<std::string, std::string> env_;
  std::vector<std::string> images_;  // created by this test, removed in TearDown
};

TEST_F(NbdNetlinkCephTest, MapConnectsAndKillNineSendsLinkDeadWithinOneSecond) {
  const std::string image = ImageName("kill");
  Status created = CreateImage(image);
  ASSERT_TRUE(created.ok()) << created.ToString();
  auto index = nl_->FindFreeDevice();
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  const std::string cookie = NewCookie();
  auto child = Map(image, *index, cookie);
  ASSERT_TRUE(child.ok()) << child.status().ToString();

  auto status = nl_->Status(*index);
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_TRUE(status->connected) << DeviceName(*index) << " not connected after map";
  auto backend = ReadNbdBackendCookie(*index);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  EXPECT_EQ(*backend, cookie);
  auto free_now = nl_->FindFreeDevice();
  ASSERT_TRUE(free_now.ok()) << free_now.status().ToString();
  EXPECT_NE(*free_now, *index) << "FindFreeDevice returned the mapped device";

  std::vector<LinkDeadEvent> events;
  ASSERT_TRUE(nl_->SubscribeLinkDead([&](int dead) {
                   events.push_back({dead, Clock::now()});
                   if (events.size() == 1) loop_.Stop();
                 })
                  .ok());
  const auto killed_at = Clock::now();
  ASSERT_EQ(kill(child->pid(), SIGKILL), 0);
  RunLoop(loop_, milliseconds(5000));

  ASSERT_FALSE(events.empty()) << "no LINK_DEAD within " << MsSince(killed_at, Clock::now())
                               << " ms of kill -9 of rbd-nbd (limit 5000 ms)";
  const double latency_ms = MsSince(killed_at, events[0].at);
  std::cout << "[ kernel ] kill -9 of rbd-nbd (pid " << child->pid() << ") -> LINK_DEAD for nbd" << events[0].index
            << " after " << latency_ms << " ms\n";
  EXPECT_EQ(events[0].index, *index);
  EXPECT_LT(latency_ms, 1000.0) << "LINK_DEAD took longer than 1 s to reach the loop";

  auto exit = child->Wait(milliseconds(10000));
  ASSERT_TRUE(exit.ok()) << exit.status().ToString();
  EXPECT_EQ(exit->code, -SIGKILL);
  auto after_kill = nl_->Status(*index);
  std::cout << "[ kernel ] STATUS after kill -9 (reattach window open): "
            << (after_kill.ok() ? (after_kill->connected ? "connected" : "disconnected")
                                : after_kill.status().ToString())
            << "\n";

  // Clean up: unmap works on a device with no process behind it.
  EXPECT_TRUE(Run(WithCephArgs({"rbd-nbd", "unmap", DeviceName(*index)})).ok());
  RunLoop(loop_, milliseconds(1500));  // collect any LINK_DEAD the unmap causes
  auto final_status = WaitDisconnected(*nl_, *index, milliseconds(30000));
  ASSERT_TRUE(final_status.ok()) << final_status.status().ToString();
  EXPECT_FALSE(final_status->connected) << DeviceName(*index) << " still connected after unmap";
  std::cout << "[ kernel ] LINK_DEAD events in total for the kill + unmap: " << events.size() << "\n";
}

TEST_F(NbdNetlinkCephTest, PlannedUnmapLeavesTheDeviceDisconnected) {
  const std::string image = ImageName("unmap");
  Status created = CreateImage(image);
  ASSERT_TRUE(created.ok()) << created.ToString();
  auto index = nl_->FindFreeDevice();
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  const std::string cookie = NewCookie();
  auto child = Map(image, *index, cookie);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  auto backend = ReadNbdBackendCookie(*index);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  EXPECT_EQ(*backend, cookie);

  std::vector<LinkDeadEvent> events;
  ASSERT_TRUE(nl_->SubscribeLinkDead([&](int dead) { events.push_back({dead, Clock::now()}); }).ok());
  const auto unmap_at = Clock::now();
  Status unmap = Run(WithCephArgs({"rbd-nbd", "unmap", DeviceName(*index)}));
  ASSERT_TRUE(unmap.ok()) << unmap.ToString();
  // Collect whatever the kernel multicasts around a planned unmap.
  RunLoop(loop_, milliseconds(3000));

  std::cout << "[ kernel ] planned rbd-nbd unmap of " << DeviceName(*index) << ": " << events.size()
            << " LINK_DEAD event(s)";
  for (const LinkDeadEvent& e : events) {
    std::cout << " [nbd" << e.index << " after " << MsSince(unmap_at, e.at) << " ms]";
  }
  std::cout << "\n";
  for (const LinkDeadEvent& e : events) EXPECT_EQ(e.index, *index);

  auto exit = child->Wait(milliseconds(30000));
  ASSERT_TRUE(exit.ok()) << exit.status().ToString();
  std::cout << "[ rbd-nbd ] map -f after unmap: " << exit->ToString() << "\n";
  EXPECT_EQ(exit->code, 0);

  auto final_status = WaitDisconnected(*nl_, *index, milliseconds(30000));
  ASSERT_TRUE(final_status.ok()) << final_status.status().ToString();
  EXPECT_FALSE(final_status->connected) << DeviceName(*index) << " still connected after unmap";
  auto gone = ReadNbdBackendCookie(*index);
  std::cout << "[ kernel ] backend after unmap: " << gone.status().ToString() << "\n";
  EXPECT_EQ(gone.status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace nbdk
