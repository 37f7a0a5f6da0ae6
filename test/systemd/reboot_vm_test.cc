// A bare-metal host's orderly reboot (issue 32), in the systemd VM once its
// other suites are done (orderly-reboot.sh runs both halves around
// `systemctl reboot`):
//  - BeforeReboot: docs/operate/bare-metal.md's quick start as written,
//    with only ceph.conf and a keyring (ceph-csi's config.json removed): an
//    ext4 volume with mount options and a block volume, both persisted, data
//    written to the block one through its stable name; a map of an image
//    mapped by a hand-run rbd-nbd is refused, naming its device.
//  - AfterReboot: the previous boot's journal shows nbdkeeper-volumes
//    unmounting and unmapping both in the reverse order, finishing before
//    nbdkeeperd, the network and the VM's Ceph stopped; this boot mapped
//    both again, mounted with their options, data intact.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "test/common/vm_command.h"
#include "test/systemd/systemd_vm_env.h"
#include "test/systemd/unit_control.h"

namespace nbdk::systemdtest {
namespace {

using namespace std::chrono_literals;

// The page whose quick start BeforeReboot runs, relative to the source
// tree; it marks the quick start with kBareMetalMarker on the line before
// its block.
constexpr char kBareMetalPage[] = "docs/operate/bare-metal.md";
constexpr char kBareMetalMarker[] = "<!-- bare-metal: test/systemd runs the next block as written -->";
// What the quick start maps (pool "rbd" and client.admin: the VM's Ceph has both).
constexpr char kDbSpec[] = "rbd/db";
constexpr char kDbMount[] = "/mnt/db";
constexpr char kRawSpec[] = "rbd/raw";
constexpr char kRawLink[] = "/dev/nbdkeeper/rbd/raw";

std::string RebootMarker(const std::string& spec) { return "written before the orderly reboot to " + spec + "\n"; }

// `nbdkeeperctl list --format json`, by spec: state, device, mount point.
struct Row {
  std::string state, device, mount_point;
};
std::map<std::string, Row> ListRows() {
  std::map<std::string, Row> rows;
  CtlRun run = Ctl({"list", "--format", "json"});
  rapidjson::Document doc;
  doc.Parse(run.output.c_str());
  if (run.exit != 0 || doc.HasParseError() || !doc.IsArray()) {
    ADD_FAILURE() << "list --format json: " << run.output;
    return rows;
  }
  for (const auto& v : doc.GetArray()) {
    rows[v["spec"].GetString()] = {v["state"].GetString(), v["device"].GetString(), v["mount_point"].GetString()};
  }
  return rows;
}

// The mount options of `target` as the kernel shows them (/proc/self/mountinfo).
std::string MountOptions(const std::string& target) {
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string id, parent, devno, root, mount_point, options;
    f >> id >> parent >> devno >> root >> mount_point >> options;
    if (mount_point == target) return options;
  }
  return "";
}

std::string LinkTarget(const std::string& link) {
  std::error_code ec;
  auto t = std::filesystem::read_symlink(link, ec);
  return ec ? "" : t.string();
}

class BeforeReboot : public SystemdVmTest {};

TEST_F(BeforeReboot, TheQuickStartNeedsOnlyCephConfAndAKeyring) {
  // A bare-metal host: ceph.conf and a keyring, as for `rbd`; no ceph-csi.
  std::filesystem::remove(kCephCsiConfig);
  ASSERT_TRUE(std::filesystem::exists("/etc/ceph/ceph.conf"));
  ASSERT_TRUE(std::filesystem::exists("/etc/ceph/ceph.client.admin.keyring"));
  ASSERT_EQ(Ctl({"list", "--format", "json"}).output, "[]\n") << "the earlier suites left a volume mapped";
  // A persistent journal: the shutdown's steps are read after the reboot.
  std::filesystem::create_directories("/var/log/journal");
  ASSERT_TRUE(vmtest::RunCommand({"systemd-tmpfiles", "--create", "--prefix", "/var/log/journal"}).ok());
  ASSERT_TRUE(vmtest::RunCommand({"journalctl", "--flush"}).ok());

  Result<std::string> block = MarkdownBlockAfter(std::string(NBDK_SOURCE_DIR "/") + kBareMetalPage, kBareMetalMarker);
  ASSERT_TRUE(block.ok()) << block.status().ToString();
  // As in a login shell on Debian, where docs/operate/systemd.md installs
  // the binaries (the VM's agent runs with the system directories only).
  std::ofstream("/root/bare-metal.sh") << "export PATH=/usr/local/sbin:/usr/local/bin:$PATH\n" << *block;
  auto ran = vmtest::RunCommand({"bash", "-euo", "pipefail", "/root/bare-metal.sh"}, /*merge_stderr=*/true);
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  std::printf("[ quick start ]\n%s", ran->stdout_text.c_str());
  ASSERT_EQ(ran->exit.code, 0) << "the quick start of " << kBareMetalPage << " failed:\n"
                               << *block << "\n"
                               << ran->stdout_text;

  auto rows = ListRows();
  ASSERT_EQ(rows.count(kDbSpec), 1u);
  ASSERT_EQ(rows.count(kRawSpec), 1u);
  EXPECT_EQ(rows[kDbSpec].state, "Connected");
  EXPECT_EQ(rows[kDbSpec].mount_point, kDbMount);
  EXPECT_EQ(rows[kRawSpec].state, "Connected");
  EXPECT_EQ(LinkTarget(kRawLink), rows[kRawSpec].device) << "the stable name is the block volume's device";
  EXPECT_EQ(LinkTarget("/dev/nbdkeeper/rbd/db"), rows[kDbSpec].device);
  EXPECT_NE(MountOptions(kDbMount).find("noatime"), std::string::npos) << MountOptions(kDbMount);
  auto before = UnitProperties("mnt-db.mount", {"Before", "After"});
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  std::printf("[ quick start ] mnt-db.mount Before=%s After=%s\n", (*before)["Before"].c_str(),
              (*before)["After"].c_str());
  EXPECT_NE((*before)["Before"].find("remote-fs.target"), std::string::npos) << "_netdev: a network mount to systemd";
  auto volumes = StateOf(kVolumesUnit);
  ASSERT_TRUE(volumes.ok());
  EXPECT_EQ(volumes->active_state, "active") << "its stop side runs only if it is active";

  ASSERT_TRUE(WriteMarker(std::string(kDbMount) + "/marker", false, RebootMarker(kDbSpec)).ok());
  ASSERT_TRUE(WriteMarker(kRawLink, true, RebootMarker(kRawSpec)).ok()) << "written through the stable name";
  // The agent must not unmap what this job leaves for the reboot.
  std::filesystem::create_directories("/run/nbdk-vm");
  std::ofstream("/run/nbdk-vm/keep-devices").put('\n');
}

TEST_F(BeforeReboot, AnImageMappedByAHandRunRbdNbdIsRefused) {
  const std::string image = "bare-foreign";
  ASSERT_TRUE(vmtest::CreateImage(Ceph(), image, 32).ok());
  auto mapped = vmtest::RunCommand({"rbd-nbd", "-c", Ceph().conf, "--id", Ceph().user, "--keyfile", Ceph().keyfile,
                                    "map", Ceph().pool + "/" + image});
  ASSERT_TRUE(mapped.ok() && mapped->exit.code == 0)
      << (mapped.ok() ? mapped->stdout_text : mapped.status().ToString());
  std::string device = mapped->stdout_text.substr(0, mapped->stdout_text.find('\n'));
  CtlRun refused = Ctl({"map", Ceph().pool + "/" + image, "--block"});
  std::printf("[ foreign ] %s", refused.output.c_str());
  EXPECT_EQ(refused.exit, 1) << refused.output;
  EXPECT_NE(refused.output.find("rbd-nbd pid"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find(device), std::string::npos) << refused.output;
  EXPECT_EQ(ListRows().count(Ceph().pool + "/" + image), 0u) << "the refused map changed nothing";
  EXPECT_TRUE(vmtest::RunCommand({"rbd-nbd", "unmap", device}).ok());
  EXPECT_TRUE(vmtest::RemoveImage(Ceph(), image).ok());
}

class AfterReboot : public SystemdVmTest {};

// The previous boot's shutdown: each volume's step, then the order of the
// units' stop jobs as systemd logged them.
TEST_F(AfterReboot, TheShutdownUnmountedAndUnmappedInOrderWhileTheNetworkWasUp) {
  auto volumes = PreviousBootJournalJson({"-u", std::string(kVolumesUnit)});
  ASSERT_TRUE(volumes.ok()) << volumes.status().ToString();
  std::vector<std::string> steps;
  for (const std::string& line : *volumes) {
    rapidjson::Document e;
    e.Parse(line.c_str());
    if (e.HasParseError() || !e.HasMember("MESSAGE") || !e["MESSAGE"].IsString()) continue;
    std::string message = e["MESSAGE"].GetString();
    if (message.find("unmounted and unmapped") != std::string::npos || message.starts_with("unmapped ")) {
      steps.push_back(message);
    }
  }
  for (const std::string& s : steps) std::printf("[ shutdown ] %s\n", s.c_str());
  ASSERT_EQ(steps.size(), 3u) << "both volumes, then the total";
  EXPECT_TRUE(steps[0].starts_with(std::string(kRawSpec) + ": unmounted and unmapped")) << "the last mapped first";
  EXPECT_TRUE(steps[1].starts_with(std::string(kDbSpec) + ": unmounted and unmapped"));
  EXPECT_TRUE(steps[2].starts_with("unmapped 2 volume(s)") && steps[2].ends_with(", 0 failed")) << steps[2];

  // When systemd finished each stop job (its MONOTONIC time).
  auto pid1 = PreviousBootJournalJson({"_PID=1"});
  ASSERT_TRUE(pid1.ok()) << pid1.status().ToString();
  std::map<std::string, uint64_t> stopped;
  for (const std::string& line : *pid1) {
    rapidjson::Document e;
    e.Parse(line.c_str());
    if (e.HasParseError() || !e.HasMember("UNIT") || !e.HasMember("JOB_TYPE") || !e.HasMember("JOB_RESULT")) continue;
    if (std::string(e["JOB_TYPE"].GetString()) != "stop" || std::string(e["JOB_RESULT"].GetString()) != "done")
      continue;
    stopped[e["UNIT"].GetString()] = std::stoull(e["__MONOTONIC_TIMESTAMP"].GetString());
  }
  const std::string volumes_unit = std::string(kVolumesUnit) + ".service";
  ASSERT_EQ(stopped.count(volumes_unit), 1u) << "no stop job of " << volumes_unit << " in the last boot's journal";
  for (const char* later : {"nbdkeeperd.service", "network-online.target", "nbdk-vm-ceph.service", "mnt-db.mount"}) {
    if (!stopped.count(later)) {
      std::printf("[ shutdown ] no stop job logged for %s\n", later);
      continue;
    }
    std::printf("[ shutdown ] %s stopped %.3f s after %s\n", later,
                (static_cast<double>(stopped[later]) - static_cast<double>(stopped[volumes_unit])) / 1e6,
                volumes_unit.c_str());
    if (std::string(later) != "mnt-db.mount") EXPECT_LT(stopped[volumes_unit], stopped[later]) << later;
  }
  auto daemon = PreviousBootJournalJson({"-u", std::string(kUnit), "EVENT=device_link"});
  ASSERT_TRUE(daemon.ok());
  // The boot's earlier suites mapped and unmapped volumes of their own:
  // only the quick start's two links count.
  size_t removed = 0;
  for (const std::string& line : *daemon) {
    bool ours = line.find("/rbd/db\"") != std::string::npos || line.find("/rbd/raw\"") != std::string::npos;
    removed += ours && line.find("\"removed\"") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(removed, 2u) << "both stable names removed after their unmap";
}

TEST_F(AfterReboot, BothVolumesAreBackWithTheirData) {
  std::string state = WaitForOneshot(kVolumesUnit, 240s);
  ASSERT_NE(state, "") << "nbdkeeper-volumes did not finish";
  ASSERT_EQ(state, "active") << "nbdkeeper-volumes failed";
  auto rows = ListRows();
  EXPECT_EQ(rows[kDbSpec].state, "Connected");
  EXPECT_EQ(rows[kRawSpec].state, "Connected");
  EXPECT_TRUE(vmtest::IsMountPoint(kDbMount));
  EXPECT_NE(MountOptions(kDbMount).find("noatime"), std::string::npos) << "the persisted mount options";
  auto db = ReadMarker(std::string(kDbMount) + "/marker", false);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(*db, RebootMarker(kDbSpec));
  ASSERT_EQ(LinkTarget(kRawLink), rows[kRawSpec].device) << "the stable name again, on this boot's device";
  auto raw = ReadMarker(kRawLink, true);
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  EXPECT_EQ(*raw, RebootMarker(kRawSpec));
  CtlRun status = Ctl({"status"});
  std::printf("%s", status.output.c_str());
}

}  // namespace
}  // namespace nbdk::systemdtest
