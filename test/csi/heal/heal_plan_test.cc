// PlanHeal: one test per decision, from hand-made evidence.
#include "csi/heal/heal_plan.h"

#include <gtest/gtest.h>

namespace nbdk {
namespace {

constexpr const char* kBoot = "5c4e4d2a-1111-2222-3333-444455556666";
const ServerIdentity kUs{"/usr/bin/rbd-nbd", 0};

VolumeRecord Staged() {
  VolumeRecord r;
  r.volume_id = "0001-0009-rook-ceph-0000000000000002-vol-a";
  r.pool = "rbd";
  r.image = "csi-vol-a";
  r.nbd_device = "/dev/nbd3";
  r.cookie = r.volume_id;
  r.rbd_nbd_pid = 4242;
  r.boot_id = kBoot;
  r.state = VolumeState::kStaged;
  return r;
}

// The device as the journaled map (pid 4242) connected it.
NbdDeviceView Ours(const VolumeRecord& r, DeviceIo io = DeviceIo::kNotProbed) { return {true, r.cookie, 4242, io}; }

RbdNbdProcess Server(int pid, const VolumeRecord& r, const char* command = "map") {
  std::vector<std::string> argv = {"/usr/bin/rbd-nbd", command, "-f"};
  if (std::string(command) == "attach") argv.insert(argv.end(), {"--device", r.nbd_device});
  argv.insert(argv.end(), {"--try-netlink", "--reattach-timeout", "300", "--cookie", r.cookie, "--id", "nbdk",
                           "--keyfile", "/run/k", "rbd/" + r.image});
  return {pid, argv, "/usr/bin/rbd-nbd", 0, 0};
}

TEST(HealPlanTest, AdoptsTheLiveServerOfItsCookieAndImage) {
  VolumeRecord r = Staged();
  HealPlan p = PlanHeal(r, kBoot, Ours(r), {{77, {"/bin/sleep", "100"}, "", -1, -1}, Server(4242, r)}, kUs);
  EXPECT_EQ(p.action, HealAction::kAdopt) << p.reason;
  EXPECT_EQ(p.pid, 4242);
}

TEST(HealPlanTest, AdoptsTheJournaledAttachThoughSysfsNamesTheOriginalMap) {
  VolumeRecord r = Staged();
  r.rbd_nbd_pid = 5000;  // journaled when the supervisor spawned the attach
  HealPlan p = PlanHeal(r, kBoot, Ours(r), {Server(5000, r, "attach")}, kUs);
  EXPECT_EQ(p.action, HealAction::kAdopt) << p.reason;
  EXPECT_EQ(p.pid, 5000);
}

TEST(HealPlanTest, AnAttachThatIsNotJournaledIsNotAdopted) {
  VolumeRecord r = Staged();
  HealPlan p = PlanHeal(r, kBoot, Ours(r, DeviceIo::kServes), {Server(5000, r, "attach")}, kUs);
  EXPECT_EQ(p.action, HealAction::kUnknownServer) << p.reason;
  EXPECT_EQ(p.pid, 0);
  EXPECT_NE(p.reason.find("pid 5000 is an attach, not the journaled pid 4242"), std::string::npos) << p.reason;
  RbdNbdProcess elsewhere = Server(5000, r, "attach");
  elsewhere.argv[4] = "/dev/nbd9";  // --device
  r.rbd_nbd_pid = 5000;
  p = PlanHeal(r, kBoot, Ours(r), {elsewhere}, kUs);
  EXPECT_EQ(p.action, HealAction::kReattach) << p.reason;
  EXPECT_NE(p.reason.find("without --device /dev/nbd3"), std::string::npos) << p.reason;
}

TEST(HealPlanTest, AnotherExecutableIsNeitherAdoptedNorSignalled) {
  VolumeRecord r = Staged();
  RbdNbdProcess impostor = Server(4242, r);
  impostor.exe = "/tmp/x/rbd-nbd";  // argv[0] says rbd-nbd, anyone can say that
  HealPlan p = PlanHeal(r, kBoot, Ours(r, DeviceIo::kServes), {impostor}, kUs);
  EXPECT_EQ(p.action, HealAction::kUnknownServer) << p.reason;
  EXPECT_EQ(p.pid, 0);
  EXPECT_NE(p.reason.find("pid 4242 runs '/tmp/x/rbd-nbd', not /usr/bin/rbd-nbd"), std::string::npos) << p.reason;
  impostor.exe = "";  // unreadable
  EXPECT_NE(PlanHeal(r, kBoot, Ours(r), {impostor}, kUs).action, HealAction::kAdopt);
  // A package upgrade replaced the binary under the running server.
  RbdNbdProcess upgraded = Server(4242, r);
  upgraded.exe = "/usr/bin/rbd-nbd (deleted)";
  EXPECT_EQ(PlanHeal(r, kBoot, Ours(r), {upgraded}, kUs).action, HealAction::kAdopt);
}

TEST(HealPlanTest, AProcessOfAnotherUserIsNotAdopted) {
  VolumeRecord r = Staged();
  RbdNbdProcess p = Server(4242, r);
  p.uid = p.euid = 1000;
  HealPlan plan = PlanHeal(r, kBoot, Ours(r), {p}, kUs);
  EXPECT_EQ(plan.action, HealAction::kReattach) << plan.reason;
  EXPECT_NE(plan.reason.find("pid 4242 runs as uid 1000/1000, not 0"), std::string::npos) << plan.reason;
  p.uid = 0;  // setuid to someone else
  EXPECT_NE(PlanHeal(r, kBoot, Ours(r), {p}, kUs).action, HealAction::kAdopt);
}

TEST(HealPlanTest, AMapThatDidNotConnectTheDeviceIsNotAdopted) {
  VolumeRecord r = Staged();
  NbdDeviceView device = Ours(r);
  device.pid = 4100;  // the kernel says another process connected nbd3
  HealPlan p = PlanHeal(r, kBoot, device, {Server(4242, r)}, kUs);
  EXPECT_EQ(p.action, HealAction::kReattach) << p.reason;
  EXPECT_NE(p.reason.find("pid 4242 is a map but /dev/nbd3 was connected by pid 4100"), std::string::npos) << p.reason;
}

TEST(HealPlanTest, PrefersTheJournaledPidAmongSeveralServers) {
  VolumeRecord r = Staged();
  HealPlan p =
      PlanHeal(r, kBoot, Ours(r), {Server(5000, r, "attach"), Server(4242, r), Server(6000, r, "attach")}, kUs);
  EXPECT_EQ(p.pid, 4242);
}

TEST(HealPlanTest, ReattachesWhenTheDeviceIsStillOursAndNobodyServesIt) {
  VolumeRecord r = Staged();
  EXPECT_EQ(PlanHeal(r, kBoot, Ours(r), {}, kUs).action, HealAction::kReattach);
  EXPECT_EQ(PlanHeal(r, kBoot, Ours(r, DeviceIo::kWaits), {}, kUs).action, HealAction::kReattach);
}

TEST(HealPlanTest, ARecycledPidIsNotAdopted) {
  VolumeRecord r = Staged();
  // The journaled pid now belongs to another program...
  HealPlan p = PlanHeal(r, kBoot, Ours(r), {{4242, {"/usr/sbin/nginx", "-g", "daemon off;"}, "", -1, -1}}, kUs);
  EXPECT_EQ(p.action, HealAction::kReattach) << p.reason;
  // ...or to an rbd-nbd serving another volume.
  VolumeRecord other = Staged();
  other.cookie = "vol-b";
  other.image = "csi-vol-b";
  p = PlanHeal(r, kBoot, Ours(r), {Server(4242, other)}, kUs);
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

// A snapshot's volume is served by a server of that snapshot only: one of
// the image's head (the same cookie, the same image) is not adopted for it,
// and a snapshot's server never for the head's record.
TEST(HealPlanTest, ASnapshotIsServedOnlyByAServerOfThatSnapshot) {
  VolumeRecord snap = Staged();
  snap.snap = "monday";
  RbdNbdProcess p = Server(4242, snap);
  EXPECT_FALSE(ServesRecord(p, snap)) << "the head's server";
  p.argv.back() = "rbd/csi-vol-a@tuesday";
  EXPECT_FALSE(ServesRecord(p, snap));
  p.argv.back() = "rbd/csi-vol-a@monday";
  EXPECT_TRUE(ServesRecord(p, snap));
  EXPECT_FALSE(ServesRecord(p, Staged())) << "a snapshot's server for the head's record";
  HealPlan plan = PlanHeal(snap, kBoot, Ours(snap), {Server(4242, snap)}, kUs);
  EXPECT_NE(plan.action, HealAction::kAdopt) << plan.reason;
  plan = PlanHeal(snap, kBoot, Ours(snap), {p}, kUs);
  EXPECT_EQ(plan.action, HealAction::kAdopt) << plan.reason;
}

TEST(HealPlanTest, ExpiredWhenTheDeviceIsNoLongerConfigured) {
  VolumeRecord r = Staged();
  // Even a live server does not help: the kernel forgot the device.
  HealPlan p = PlanHeal(r, kBoot, NbdDeviceView{}, {Server(4242, r)}, kUs);
  EXPECT_EQ(p.action, HealAction::kExpired);
  EXPECT_NE(p.reason.find("/dev/nbd3 is no longer configured"), std::string::npos) << p.reason;
}

TEST(HealPlanTest, ExpiredWhenTheDeviceCarriesAnotherCookie) {
  VolumeRecord r = Staged();
  HealPlan p = PlanHeal(r, kBoot, NbdDeviceView{true, "someone-else", 4242, DeviceIo::kNotProbed}, {}, kUs);
  EXPECT_EQ(p.action, HealAction::kExpired);
  EXPECT_NE(p.reason.find("someone-else"), std::string::npos) << p.reason;
}

TEST(HealPlanTest, ExpiredWhenTheKernelAlreadyFailsIo) {
  VolumeRecord r = Staged();
  HealPlan p = PlanHeal(r, kBoot, Ours(r, DeviceIo::kFailsAtOnce), {}, kUs);
  EXPECT_EQ(p.action, HealAction::kExpired);
  EXPECT_NE(p.reason.find("reattach window passed"), std::string::npos) << p.reason;
}

TEST(HealPlanTest, AnUnknownServerIsLeftAlone) {
  VolumeRecord r = Staged();
  EXPECT_EQ(PlanHeal(r, kBoot, Ours(r, DeviceIo::kServes), {}, kUs).action, HealAction::kUnknownServer);
}

TEST(HealPlanTest, StaleBootWinsOverEverythingTheKernelSays) {
  VolumeRecord r = Staged();
  r.boot_id = "00000000-0000-0000-0000-000000000000";
  // After a reboot nbd3 may well be configured again, by someone else.
  HealPlan p = PlanHeal(r, kBoot, Ours(r), {Server(4242, r)}, kUs);
  EXPECT_EQ(p.action, HealAction::kStaleBoot);
  EXPECT_NE(p.reason.find("rebooted"), std::string::npos) << p.reason;
}

TEST(HealPlanTest, ANotStagedRecordIsSkipped) {
  VolumeRecord r = Staged();
  r.state = VolumeState::kStaging;
  HealPlan p = PlanHeal(r, kBoot, Ours(r), {Server(4242, r)}, kUs);
  EXPECT_EQ(p.action, HealAction::kSkip);
  EXPECT_NE(p.reason.find("'staging'"), std::string::npos) << p.reason;
}

}  // namespace
}  // namespace nbdk
