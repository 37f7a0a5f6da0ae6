// Child scopes under the installed unit (runs in the systemd VM, after the
// other systemd tests: the unit is installed as docs/operate/systemd.md
// says and the node is clean). One block volume mapped with nbdkeeperctl;
// its rbd-nbd must live in a transient scope of its own:
//  - /status (through nbdkeeperctl status --json) says so, and the kernel
//    agrees (/proc/<pid>/cgroup);
//  - `systemctl kill -s SIGKILL nbdkeeperd` (every process of the unit)
//    leaves it serving, the same pid, adopted by the restarted daemon;
//  - kill -9 of it is still noticed: re-attached, the new one in the scope;
//  - unmap ends it, and systemd collects the scope.
// A writer on the device throughout must see no IO error.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "supervisor/child_scope.h"
#include "test/common/vm_command.h"
#include "test/common/vm_volume.h"
#include "test/systemd/systemd_vm_env.h"
#include "test/systemd/unit_control.h"

namespace nbdk::systemdtest {
namespace {

using namespace std::chrono_literals;

constexpr char kImage[] = "sd-scope";

// The volume's row in `nbdkeeperctl status --json`.
struct Row {
  std::string volume_id, state, device, cgroup_mode, scope;
  int pid = 0;
};

std::optional<Row> CtlRow(const std::string& image) {
  CtlRun run = Ctl({"status", "--json"});
  if (run.exit != 0) return std::nullopt;
  rapidjson::Document doc;
  doc.Parse(run.output.c_str());
  if (doc.HasParseError() || !doc.IsArray()) return std::nullopt;
  auto str = [](const rapidjson::Value& v, const char* key) {
    auto it = v.FindMember(key);
    return it != v.MemberEnd() && it->value.IsString() ? std::string(it->value.GetString()) : std::string();
  };
  for (const auto& v : doc.GetArray()) {
    if (!str(v, "spec").ends_with("/" + image)) continue;
    Row row{str(v, "volume"), str(v, "state"), str(v, "device"), str(v, "cgroup_mode"), str(v, "scope")};
    if (auto it = v.FindMember("pid"); it != v.MemberEnd() && it->value.IsInt()) row.pid = it->value.GetInt();
    return row;
  }
  return std::nullopt;
}

// Connected with a pid other than `not_pid`, and in its scope (the move
// follows the spawn).
std::optional<Row> WaitScoped(int not_pid, std::chrono::milliseconds timeout) {
  std::optional<Row> row;
  WaitUntil(
      [&] {
        row = CtlRow(kImage);
        return row && row->state == "Connected" && row->pid > 0 && row->pid != not_pid && row->cgroup_mode == "scope";
      },
      timeout);
  return row;
}

bool ScopeListed(const std::string& unit) {
  auto out = Systemctl({"list-units", "--all", "--no-legend", "--plain", unit});
  return out.ok() && out->find(unit) != std::string::npos;
}

class ChildScope : public SystemdVmTest {};

TEST_F(ChildScope, RbdNbdOutlivesTheUnitInItsScopeAndIsStillHealed) {
  ASSERT_TRUE(Systemctl({"start", kUnit}).ok());
  (void)vmtest::RemoveImage(Ceph(), kImage);
  ASSERT_TRUE(vmtest::CreateImage(Ceph(), kImage, 64).ok());
  CtlRun map = Ctl({"map", Ceph().pool + "/" + kImage, "--cluster", kCluster, "--id", Ceph().user, "--block"});
  ASSERT_EQ(map.exit, 0) << map.output;

  // Mapped: in a scope of its own.
  std::optional<Row> first = WaitScoped(0, 30s);
  ASSERT_TRUE(first && first->cgroup_mode == "scope") << (first ? first->cgroup_mode : "no row");
  const std::string unit = ScopeUnitName(first->volume_id);
  EXPECT_EQ(first->scope, unit);
  EXPECT_TRUE(CgroupOf(first->pid).ends_with("/" + unit)) << CgroupOf(first->pid);
  auto props = UnitProperties(unit, {"ActiveState", "CollectMode"});
  ASSERT_TRUE(props.ok());
  EXPECT_EQ((*props)["ActiveState"], "active");
  EXPECT_EQ((*props)["CollectMode"], "inactive-or-failed");
  std::printf("[ map ] rbd-nbd pid %d in %s\n", first->pid, CgroupOf(first->pid).c_str());
  auto writer = vmtest::Writer::Start(first->device);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();

  // Every process of the unit killed: rbd-nbd is not one of them.
  auto old = StateOf(kUnit);
  ASSERT_TRUE(old.ok());
  ASSERT_TRUE(Systemctl({"kill", "-s", "SIGKILL", kUnit}).ok());
  double back = WaitForNewMainPid(kUnit, old->main_pid, 60s);
  ASSERT_GE(back, 0) << "Restart= did not bring the daemon back";
  EXPECT_EQ(::kill(first->pid, 0), 0) << "rbd-nbd died with the unit";
  auto status = vmtest::GetVolumeStatus(kHealthPort, first->volume_id);
  WaitUntil(
      [&] {
        status = vmtest::GetVolumeStatus(kHealthPort, first->volume_id);
        return status && status->state == "Connected";
      },
      60s);
  ASSERT_TRUE(status && status->state == "Connected");
  EXPECT_TRUE(status->adopted);
  EXPECT_EQ(status->pid, first->pid) << "not the same rbd-nbd";
  EXPECT_EQ(status->restarts, 0u) << "healed by re-attach instead of adopted";
  std::optional<Row> adopted = CtlRow(kImage);
  ASSERT_TRUE(adopted);
  EXPECT_EQ(adopted->cgroup_mode, "scope") << "an adopted child's mode comes from /proc/<pid>/cgroup";
  EXPECT_EQ(adopted->scope, unit);
  std::printf("[ systemctl kill -s SIGKILL (all) ] daemon back in %.2f s, rbd-nbd %d kept; longest write %.2f s\n",
              back, first->pid, (*writer)->longest_s());
  (*writer)->ResetLongest();

  // The child itself killed: noticed (pidfd of the adopted server),
  // re-attached, the new one in the scope again.
  ASSERT_EQ(::kill(first->pid, SIGKILL), 0);
  auto start = std::chrono::steady_clock::now();
  std::optional<Row> second = WaitScoped(first->pid, 120s);
  ASSERT_TRUE(second && second->pid != first->pid) << "not re-attached into a scope";
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(second->device, first->device);
  EXPECT_EQ(second->scope, unit);
  EXPECT_TRUE(CgroupOf(second->pid).ends_with("/" + unit)) << CgroupOf(second->pid);
  std::printf("[ kill -9 rbd-nbd ] re-attached and in its scope in %.2f s, new pid %d; longest write %.2f s\n", took,
              second->pid, (*writer)->longest_s());
  (*writer)->Stop();
  EXPECT_EQ((*writer)->errors(), 0u) << "IO errors on " << first->device;

  // Unmap: rbd-nbd exits, the empty scope is stopped and collected.
  CtlRun unmap = Ctl({"unmap", kImage});
  EXPECT_EQ(unmap.exit, 0) << unmap.output;
  double gone = WaitUntil([&] { return !ScopeListed(unit); }, 30s);
  EXPECT_GE(gone, 0) << unit << " still listed after the unmap";
  std::printf("[ unmap ] %s gone %.2f s after the unmap returned\n", unit.c_str(), gone);
  EXPECT_TRUE(vmtest::RbdNbdProcessesFor(Ceph(), kImage).empty());
  EXPECT_TRUE(vmtest::RemoveImage(Ceph(), kImage).ok());
}

}  // namespace
}  // namespace nbdk::systemdtest
