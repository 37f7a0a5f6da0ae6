// PlanHeal: one test per decision, from hand-made evidence.
#include "journal/heal_plan.h"

#include <gtest/gtest.h>

namespace nbdk {
namespace {

constexpr const char* kBoot = "5c4e4d2a-1111-2222-3333-444455556666";

VolumeRecord Staged() {
  VolumeRecord r;
  r.volume_id = "0001-0009-rook-ceph-0000000000000002-vol-a";
  r.pool = "rbd";
  r.image = "csi-vol-a";
  r.nbd_device = "/dev/nbd3";
  r.cookie = r.volume_id;
  r.rbd_nbd_pid = 4242;
  r.boot_id = kBoot;
  r.state = "staged";
  return r;
}

NbdDeviceView Ours(const VolumeRecord& r, DeviceIo io = DeviceIo::kNotProbed) { return {true, r.cookie, io}; }

RbdNbdProcess Server(int pid, const VolumeRecord& r, const char* command = "map") {
  std::vector<std::string> argv = {"/usr/bin/rbd-nbd", command, "-f"};
  if (std::string(command) == "attach") argv.insert(argv.end(), {"--device", r.nbd_device});
  argv.insert(argv.end(), {"--try-netlink", "--reattach-timeout", "300", "--cookie", r.cookie, "--id", "nbdk",
                           "--keyfile", "/run/k", "rbd/" + r.image});
  return {pid, argv};
}

TEST(HealPlanTest, AdoptsTheLiveServerOfItsCookieAndImage) {
  VolumeRecord r = Staged();
  HealPlan p = PlanHeal(r, kBoot, Ours(r), {{77, {"/bin/sleep", "100"}}, Server(4242, r)});
  EXPECT_EQ(p.action, HealAction::kAdopt) << p.reason;
  EXPECT_EQ(p.pid, 4242);
}

TEST(HealPlanTest, AdoptsAnAttachChildStartedBeforeTheCrash) {
  VolumeRecord r = Staged();
  HealPlan p = PlanHeal(r, kBoot, Ours(r), {Server(5000, r, "attach")});
  EXPECT_EQ(p.action, HealAction::kAdopt);
  EXPECT_EQ(p.pid, 5000);
  EXPECT_NE(p.reason.find("journaled pid 4242"), std::string::npos) << p.reason;
}

TEST(HealPlanTest, PrefersTheJournaledPidAmongSeveralServers) {
  VolumeRecord r = Staged();
  HealPlan p = PlanHeal(r, kBoot, Ours(r), {Server(5000, r, "attach"), Server(4242, r), Server(6000, r, "attach")});
  EXPECT_EQ(p.pid, 4242);
}

TEST(HealPlanTest, ReattachesWhenTheDeviceIsStillOursAndNobodyServesIt) {
  VolumeRecord r = Staged();
  EXPECT_EQ(PlanHeal(r, kBoot, Ours(r), {}).action, HealAction::kReattach);
  EXPECT_EQ(PlanHeal(r, kBoot, Ours(r, DeviceIo::kWaits), {}).action, HealAction::kReattach);
}

TEST(HealPlanTest, ARecycledPidIsNotAdopted) {
  VolumeRecord r = Staged();
  // The journaled pid now belongs to another program...
  HealPlan p = PlanHeal(r, kBoot, Ours(r), {{4242, {"/usr/sbin/nginx", "-g", "daemon off;"}}});
  EXPECT_EQ(p.action, HealAction::kReattach) << p.reason;
  // ...or to an rbd-nbd serving another volume.
  VolumeRecord other = Staged();
  other.cookie = "vol-b";
  other.image = "csi-vol-b";
  p = PlanHeal(r, kBoot, Ours(r), {Server(4242, other)});
  EXPECT_EQ(p.action, HealAction::kReattach) << p.reason;
}

TEST(HealPlanTest, TheCookieAloneDoesNotMakeAServer) {
  VolumeRecord r = Staged();
  RbdNbdProcess p = Server(4242, r);
  p.argv.back() = "rbd/another-image";
  EXPECT_FALSE(ServesRecord(p, r));
  p = Server(4242, r);
  p.argv[1] = "unmap";
  EXPECT_FALSE(ServesRecord(p, r));
  p = Server(4242, r);
  p.argv[0] = "/usr/bin/rbd-nbd-wrapper";
  EXPECT_FALSE(ServesRecord(p, r));
  EXPECT_TRUE(ServesRecord(Server(4242, r), r));
}

TEST(HealPlanTest, ANamespacedImageMatchesItsFullPath) {
  VolumeRecord r = Staged();
  r.rados_namespace = "tenant";
  RbdNbdProcess p = Server(1, r);
  EXPECT_FALSE(ServesRecord(p, r));  // "rbd/csi-vol-a" is another image
  p.argv.back() = "rbd/tenant/csi-vol-a";
  EXPECT_TRUE(ServesRecord(p, r));
}

TEST(HealPlanTest, ExpiredWhenTheDeviceIsNoLongerConfigured) {
  VolumeRecord r = Staged();
  // Even a live server does not help: the kernel forgot the device.
  HealPlan p = PlanHeal(r, kBoot, NbdDeviceView{}, {Server(4242, r)});
  EXPECT_EQ(p.action, HealAction::kExpired);
  EXPECT_NE(p.reason.find("/dev/nbd3 is no longer configured"), std::string::npos) << p.reason;
}

TEST(HealPlanTest, ExpiredWhenTheDeviceCarriesAnotherCookie) {
  VolumeRecord r = Staged();
  HealPlan p = PlanHeal(r, kBoot, NbdDeviceView{true, "someone-else", DeviceIo::kNotProbed}, {});
  EXPECT_EQ(p.action, HealAction::kExpired);
  EXPECT_NE(p.reason.find("someone-else"), std::string::npos) << p.reason;
}

TEST(HealPlanTest, ExpiredWhenTheKernelAlreadyFailsIo) {
  VolumeRecord r = Staged();
  HealPlan p = PlanHeal(r, kBoot, Ours(r, DeviceIo::kFailsAtOnce), {});
  EXPECT_EQ(p.action, HealAction::kExpired);
  EXPECT_NE(p.reason.find("reattach window passed"), std::string::npos) << p.reason;
}

TEST(HealPlanTest, AnUnknownServerIsLeftAlone) {
  VolumeRecord r = Staged();
  EXPECT_EQ(PlanHeal(r, kBoot, Ours(r, DeviceIo::kServes), {}).action, HealAction::kUnknownServer);
}

TEST(HealPlanTest, StaleBootWinsOverEverythingTheKernelSays) {
  VolumeRecord r = Staged();
  r.boot_id = "00000000-0000-0000-0000-000000000000";
  // After a reboot nbd3 may well be configured again, by someone else.
  HealPlan p = PlanHeal(r, kBoot, Ours(r), {Server(4242, r)});
  EXPECT_EQ(p.action, HealAction::kStaleBoot);
  EXPECT_NE(p.reason.find("rebooted"), std::string::npos) << p.reason;
}

TEST(HealPlanTest, ANotStagedRecordIsSkipped) {
  VolumeRecord r = Staged();
  r.state = "staging";
  HealPlan p = PlanHeal(r, kBoot, Ours(r), {Server(4242, r)});
  EXPECT_EQ(p.action, HealAction::kSkip);
  EXPECT_NE(p.reason.find("'staging'"), std::string::npos) << p.reason;
}

}  // namespace
}  // namespace nbdk
