// nbdkeeperctl on the real kernel and Ceph (runs in the test VM): map with
// --size, --mount and --persist, list, expand, a killed rbd-nbd healing in
// `status`, persisted volumes brought back by `apply` after their mapping
// went away and after a daemon restart, logs, unmap. Prints the captured
// table and JSON and the time `apply` took. `map --size` never takes over an
// image it did not make. A snapshot maps read-only beside its image, and
// both heal.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "base/command.h"
#include "test/common/daemon_process.h"
#include "test/common/vm_command.h"
#include "test/common/vm_volume.h"

namespace nbdk {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
const std::string kRoot = "/run/nbdk-ctl-vm";

struct Ran {
  int exit = -1;
  std::string output;
};

class CtlVmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ceph_ = vmtest::VmCeph::FromEnv();
    ASSERT_TRUE(ceph_.complete()) << "run inside the test VM";
    fs::remove_all(kRoot);
    fs::create_directories(kRoot + "/mnt");
    ASSERT_TRUE(vmtest::WriteCephCsiConfig(kRoot + "/ceph-csi.json", "vm", ceph_).ok());
    std::ofstream(kRoot + "/nbdkeeper.json")
        << R"({"ceph_csi_config": ")" << kRoot << R"(/ceph-csi.json", "ceph_conf": ")" << ceph_.conf
        << R"(", "state_dir": ")" << kRoot << R"(/state", "key_dir": ")" << kRoot << R"(/keys", "mount_roots": ")"
        << kRoot << R"(/mnt"})";
    daemon_ = std::make_unique<test::DaemonProcess>(NBDKEEPERD_PATH, kRoot);
    StartDaemon();
  }
  void TearDown() override {
    if (daemon_) daemon_->Stop(SIGTERM);
  }

  void StartDaemon() {
    ASSERT_TRUE(daemon_->Start({"--config", kRoot + "/nbdkeeper.json"})) << daemon_->Log();
    ASSERT_TRUE(daemon_->WaitReady(60000)) << daemon_->Log();
  }

  Ran Ctl(std::vector<std::string> args) {
    std::vector<std::string> argv = {
        NBDKEEPERCTL_PATH, "--config=" + kRoot + "/nbdkeeper.json", "--csi-endpoint=" + daemon_->endpoint(),
        "--health=127.0.0.1:" + std::to_string(daemon_->health_port()), "--persist-file=" + kRoot + "/volumes.json"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = vmtest::RunCommand(argv, true);
    if (!r.ok()) return {};
    return {r->exit.code, r->stdout_text};
  }

  // The `list --json` entry of `image` ("pool/image"); {"state": "absent"}
  // when there is none.
  rapidjson::Document Entry(const std::string& image) {
    rapidjson::Document doc;
    Ran r = Ctl({"list", "--json"});
    doc.Parse(r.output.c_str());
    rapidjson::Document out;
    out.Parse(R"({"state": "absent", "pid": 0, "restarts": 0})");
    if (!doc.IsArray()) {
      ADD_FAILURE() << "list --json: " << r.output;
      return out;
    }
    for (auto& v : doc.GetArray()) {
      if (v.IsObject() && v.HasMember("spec") && v["spec"].GetString() == image) out.CopyFrom(v, out.GetAllocator());
    }
    return out;
  }

  std::string Spec(const std::string& image) const { return ceph_.pool + "/" + image; }
  std::vector<std::string> Auth() const { return {"--cluster", "vm", "--id", ceph_.user}; }

  vmtest::VmCeph ceph_;
  std::unique_ptr<test::DaemonProcess> daemon_;
};

uint64_t FsBytes(const std::string& path) {
  struct statvfs st {};
  return ::statvfs(path.c_str(), &st) == 0 ? st.f_blocks * st.f_frsize : 0;
}

constexpr size_t kBlock = 4096;

// The first 4 KiB of `device`, read past the page cache; "" when unreadable.
std::string FirstBlock(const std::string& device) {
  int fd = ::open(device.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) return "";
  void* buf = nullptr;
  std::string out;
  if (::posix_memalign(&buf, kBlock, kBlock) == 0 && ::pread(fd, buf, kBlock, 0) == static_cast<ssize_t>(kBlock)) {
    out.assign(static_cast<char*>(buf), kBlock);
  }
  std::free(buf);
  ::close(fd);
  return out;
}

// Writes 4 KiB of `letter` at the start of `device`, synchronously: false
// when the open or the write fails.
bool WriteFirstBlock(const std::string& device, char letter) {
  int fd = ::open(device.c_str(), O_WRONLY | O_DIRECT | O_DSYNC | O_CLOEXEC);
  if (fd < 0) return false;
  void* buf = nullptr;
  bool written = false;
  if (::posix_memalign(&buf, kBlock, kBlock) == 0) {
    std::memset(buf, letter, kBlock);
    written = ::pwrite(fd, buf, kBlock, 0) == static_cast<ssize_t>(kBlock);
  }
  std::free(buf);
  ::close(fd);
  return written;
}

TEST_F(CtlVmTest, MapListExpandHealApplyUnmap) {
  std::string mnt = kRoot + "/mnt/ctl-a";
  const std::vector<std::string> auth = Auth();
  std::vector<std::string> map_a = {"map", Spec("ctl-a"), "--size", "64M", "--mount", mnt, "--persist"};
  map_a.insert(map_a.end(), auth.begin(), auth.end());
  Ran a = Ctl(map_a);
  ASSERT_EQ(a.exit, 0) << a.output << daemon_->Log();
  // Not a terminal: the device path alone, as a script takes it.
  EXPECT_TRUE(a.output.starts_with("/dev/nbd") && a.output.find('\n') + 1 == a.output.size()) << a.output;
  EXPECT_EQ(Entry(Spec("ctl-a"))["mount_point"].GetString(), mnt);
  std::ofstream(mnt + "/kept.txt") << "written before everything\n";
  std::vector<std::string> map_b = {"map", Spec("ctl-b"), "--size", "32M", "--block"};
  map_b.insert(map_b.end(), auth.begin(), auth.end());
  Ran b = Ctl(map_b);
  ASSERT_EQ(b.exit, 0) << b.output;

  Ran table = Ctl({"list"});
  EXPECT_EQ(table.exit, 0);
  std::printf("[ list ]\n%s", table.output.c_str());
  EXPECT_NE(table.output.find(Spec("ctl-a")), std::string::npos);
  EXPECT_NE(table.output.find(Spec("ctl-b")), std::string::npos);
  EXPECT_EQ(Entry(Spec("ctl-a"))["state"].GetString(), std::string("Connected"));

  uint64_t before = FsBytes(mnt);
  Ran grown = Ctl({"expand", "ctl-a", "128M", "--id", ceph_.user});
  EXPECT_EQ(grown.exit, 0) << grown.output;
  EXPECT_GT(FsBytes(mnt), before + (32u << 20)) << "the filesystem grew";

  // kill -9 the rbd-nbd: the table shows the heal.
  int pid = Entry(Spec("ctl-a"))["pid"].GetInt();
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  auto deadline = Clock::now() + std::chrono::seconds(90);
  while (Clock::now() < deadline) {
    auto e = Entry(Spec("ctl-a"));
    if (e.HasMember("restarts") && e["restarts"].GetUint() == 1 && e["state"].GetString() == std::string("Connected")) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(Entry(Spec("ctl-a"))["restarts"].GetUint(), 1u);
  Ran healed = Ctl({"status"});
  std::printf("[ status after kill -9 ]\n%s", healed.output.c_str());
  std::printf("[ status --json ]\n%s", Ctl({"status", "--json"}).output.c_str());
  EXPECT_NE(healed.output.find("s ago"), std::string::npos) << "LAST HEAL shows the re-attach";

  Ran health = Ctl({"health"});
  EXPECT_EQ(health.exit, 0) << health.output;
  EXPECT_EQ(Ctl({"logs", "ctl-a"}).exit, 0);

  // The persisted volume's mapping goes away behind the CLI's back (as after
  // a reboot); `apply` brings it back, data intact.
  fs::copy_file(kRoot + "/volumes.json", kRoot + "/volumes.json.keep", fs::copy_options::overwrite_existing);
  Ran unmapped = Ctl({"unmap", mnt});
  ASSERT_EQ(unmapped.exit, 0) << unmapped.output;
  EXPECT_EQ(Entry(Spec("ctl-a"))["state"].GetString(), std::string("absent"));
  fs::copy_file(kRoot + "/volumes.json.keep", kRoot + "/volumes.json", fs::copy_options::overwrite_existing);
  auto t0 = Clock::now();
  Ran applied = Ctl({"apply"});
  double apply_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  EXPECT_EQ(applied.exit, 0) << applied.output;
  std::printf("[ apply ] %s[ apply ] %.0f ms from the command to the volume mounted\n", applied.output.c_str(),
              apply_ms);
  EXPECT_EQ(std::ifstream(mnt + "/kept.txt").good(), true) << "mounted again with its data";

  // A daemon restart: the volumes are adopted; apply finds them mapped.
  ASSERT_EQ(daemon_->Stop(SIGTERM), 0);
  StartDaemon();
  t0 = Clock::now();
  Ran again = Ctl({"apply"});
  EXPECT_EQ(again.exit, 0) << again.output;
  std::printf("[ apply after a daemon restart ] %.0f ms\n",
              std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  std::string text;
  std::getline(std::ifstream(mnt + "/kept.txt") >> std::ws, text);
  EXPECT_EQ(text, "written before everything");

  EXPECT_EQ(Ctl({"unmap", mnt}).exit, 0);
  EXPECT_EQ(Ctl({"unmap", Spec("ctl-b")}).exit, 0);
  EXPECT_EQ(Ctl({"list", "--json"}).output, "[]\n");
  Ran missing = Ctl({"map", Spec("ctl-missing"), "--cluster", "vm", "--id", ceph_.user});
  std::printf("[ map of a missing image ] exit %d: %s", missing.exit, missing.output.c_str());
  EXPECT_TRUE(missing.exit == 5 || missing.exit == 1) << missing.output;
  EXPECT_NE(missing.output.find(Spec("ctl-missing")), std::string::npos) << missing.output;
  EXPECT_EQ(Ctl({"list", "--json"}).output, "[]\n") << "the failed map left nothing";
}

// `map IMAGE@SNAP` (issue 32): the snapshot read-only beside the image's
// writer on this node, its data the snapshot's; each kill -9 of either
// rbd-nbd is healed - the snapshot's to the snapshot (its new rbd-nbd maps
// IMAGE@SNAP), the writer's past the snapshot's watch on the image.
TEST_F(CtlVmTest, MapsASnapshotReadOnlyBesideItsImageAndHealsBoth) {
  const std::string image = "ctl-snap", spec = Spec(image), snap = spec + "@before";
  const std::vector<std::string> auth = Auth();
  std::ofstream(kRoot + "/before.img") << std::string(4 << 20, 'A');
  auto imported = vmtest::RunCommand(ceph_.Rbd({"import", "--no-progress", kRoot + "/before.img", spec}), true);
  ASSERT_TRUE(imported.ok() && imported->exit.code == 0) << (imported.ok() ? imported->stdout_text : "");
  auto snapped = vmtest::RunCommand(ceph_.Rbd({"snap", "create", "--no-progress", snap}), true);
  ASSERT_TRUE(snapped.ok() && snapped->exit.code == 0) << (snapped.ok() ? snapped->stdout_text : "");

  std::vector<std::string> map_head = {"map", spec, "--block"};
  map_head.insert(map_head.end(), auth.begin(), auth.end());
  Ran head = Ctl(map_head);
  ASSERT_EQ(head.exit, 0) << head.output << daemon_->Log();
  std::string head_dev = head.output.substr(0, head.output.find('\n'));
  ASSERT_TRUE(WriteFirstBlock(head_dev, 'B')) << head_dev;

  std::vector<std::string> map_snap = {"map", snap, "--block"};
  map_snap.insert(map_snap.end(), auth.begin(), auth.end());
  Ran mapped = Ctl(map_snap);
  ASSERT_EQ(mapped.exit, 0) << mapped.output << daemon_->Log();
  std::string snap_dev = mapped.output.substr(0, mapped.output.find('\n'));
  EXPECT_NE(snap_dev, head_dev);
  EXPECT_EQ(FirstBlock(snap_dev), std::string(kBlock, 'A')) << "the snapshot's data, not the head's";
  EXPECT_EQ(FirstBlock(head_dev), std::string(kBlock, 'B'));
  EXPECT_FALSE(WriteFirstBlock(snap_dev, 'C')) << "a snapshot's device takes no write";
  rapidjson::Document entry = Entry(snap);
  EXPECT_STREQ(entry["snap"].GetString(), "before");
  EXPECT_STREQ(entry["image"].GetString(), image.c_str());
  EXPECT_STREQ(entry["volume"].GetString(), "ctl-snap.snap.before");
  std::printf("[ list --format json with a snapshot ]\n%s", Ctl({"list", "--format", "json"}).output.c_str());

  // kill -9 of each rbd-nbd in turn: the snapshot's first, then the writer's.
  for (const std::string& which : {snap, spec}) {
    int pid = Entry(which)["pid"].GetInt();
    ASSERT_GT(pid, 0) << which;
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    auto deadline = Clock::now() + std::chrono::seconds(120);
    while (Clock::now() < deadline) {
      auto e = Entry(which);
      if (e["restarts"].GetUint() == 1 && e["state"].GetString() == std::string("Connected")) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ASSERT_EQ(Entry(which)["restarts"].GetUint(), 1u) << which << "\n" << Ctl({"status"}).output;
  }
  std::vector<pid_t> snap_servers = vmtest::ProcessesOf("rbd-nbd", snap);
  ASSERT_EQ(snap_servers.size(), 1u) << "the re-attached rbd-nbd maps the snapshot";
  EXPECT_EQ(snap_servers[0], Entry(snap)["pid"].GetInt());
  EXPECT_EQ(FirstBlock(snap_dev), std::string(kBlock, 'A')) << "still the snapshot's data";
  EXPECT_EQ(FirstBlock(head_dev), std::string(kBlock, 'B'));

  EXPECT_EQ(Ctl({"unmap", snap}).exit, 0);
  EXPECT_EQ(Ctl({"unmap", spec}).exit, 0);
  EXPECT_EQ(Ctl({"list", "--json"}).output, "[]\n");
  EXPECT_TRUE(vmtest::RunCommand(ceph_.Rbd({"snap", "purge", "--no-progress", spec})).ok());
  EXPECT_TRUE(vmtest::RemoveImage(ceph_, image).ok());
}

// --size makes the image; an image it did not make (here `rbd create`) is
// refused with a message that says what to do, and nothing is mapped.
TEST_F(CtlVmTest, MapWithSizeRefusesAnImageItDidNotMake) {
  ASSERT_TRUE(vmtest::CreateImage(ceph_, "ctl-premade", 16).ok());
  std::vector<std::string> map = {"map", Spec("ctl-premade"), "--size", "64M", "--block"};
  const std::vector<std::string> auth = Auth();
  map.insert(map.end(), auth.begin(), auth.end());
  Ran refused = Ctl(map);
  std::printf("[ map --size of an image it did not make ] exit %d: %s", refused.exit, refused.output.c_str());
  EXPECT_EQ(refused.exit, 1) << refused.output;
  EXPECT_NE(refused.output.find("image ctl-premade"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("without --size"), std::string::npos) << refused.output;
  EXPECT_EQ(Ctl({"list", "--json"}).output, "[]\n");
  EXPECT_TRUE(vmtest::RemoveImage(ceph_, "ctl-premade").ok());
}

}  // namespace
}  // namespace nbdk
