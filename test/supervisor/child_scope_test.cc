// ScopeUnitName, the /proc/<pid>/cgroup reading, and how mappings use a
// ChildScopes: every spawned or adopted rbd-nbd is moved, a failed move
// never fails the map, a crashed child's replacement is moved again.
#include "supervisor/child_scope.h"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "test/supervisor/supervisor_fixture.h"

namespace nbdk {
namespace {

TEST(ScopeUnitName, EscapesTheVolumeIdAsSystemdEscapeDoes) {
  // systemd-escape 'pvc-1234_a.b' -> pvc\x2d1234_a.b
  EXPECT_EQ(ScopeUnitName("pvc-1234_a.b"), "nbdkeeper-rbd-nbd-pvc\\x2d1234_a.b.scope");
  EXPECT_EQ(ScopeUnitName("0001-0009-rook-ceph-0000000000000001-8f2b"),
            "nbdkeeper-rbd-nbd-0001\\x2d0009\\x2drook\\x2dceph\\x2d0000000000000001\\x2d8f2b.scope");
}

TEST(ScopeUnitName, TheLongestIdsFitAUnitNameAndStayDistinct) {
  std::string plain(128, 'a');
  EXPECT_EQ(ScopeUnitName(plain), "nbdkeeper-rbd-nbd-" + plain + ".scope") << "fits: not hashed";
  std::string dashes(128, '-');  // 512 bytes escaped
  std::string name = ScopeUnitName(dashes);
  EXPECT_LE(name.size(), 255u);
  EXPECT_TRUE(name.ends_with(".scope"));
  EXPECT_EQ(name, ScopeUnitName(dashes)) << "deterministic";
  std::string other = dashes;
  other.back() = 'x';  // same cut prefix, another id
  EXPECT_NE(ScopeUnitName(other), name);
  // Cut between escapes, then "-<16 hex>": never inside a "\x2d".
  std::string id_part = name.substr(18, name.size() - 18 - 6);
  size_t dash = id_part.rfind('-');
  ASSERT_NE(dash, std::string::npos);
  EXPECT_EQ(id_part.size() - dash - 1, 16u);
  EXPECT_EQ(dash % 4, 0u) << id_part;
}

TEST(ProcCgroupInUnit, ReadsEachHierarchysPath) {
  const std::string unit = "nbdkeeper-rbd-nbd-v1.scope";
  EXPECT_TRUE(ProcCgroupInUnit("0::/system.slice/nbdkeeper-rbd-nbd-v1.scope\n", unit));
  // From inside a container's cgroup namespace.
  EXPECT_TRUE(ProcCgroupInUnit("0::/../../system.slice/nbdkeeper-rbd-nbd-v1.scope\n", unit));
  // cgroup v1 / hybrid: the name=systemd hierarchy.
  EXPECT_TRUE(
      ProcCgroupInUnit("12:memory:/system.slice/nbdkeeperd.service\n"
                       "1:name=systemd:/system.slice/nbdkeeper-rbd-nbd-v1.scope\n",
                       unit));
  EXPECT_FALSE(ProcCgroupInUnit("0::/system.slice/nbdkeeperd.service\n", unit));
  EXPECT_FALSE(ProcCgroupInUnit("0::/system.slice/xnbdkeeper-rbd-nbd-v1.scope\n", unit));
  EXPECT_FALSE(ProcCgroupInUnit("0::/system.slice/nbdkeeper-rbd-nbd-v1.scope/sub\n", unit));
  EXPECT_FALSE(ProcCgroupInUnit("", unit));
  EXPECT_FALSE(ProcCgroupInUnit("garbage without colons", unit));
}

TEST(ReadProcCgroup, OurOwnAndAGoneProcess) {
  auto self = ReadProcCgroup(getpid());
  ASSERT_TRUE(self.ok()) << self.status().ToString();
  EXPECT_NE(self->find("::"), std::string::npos);
  pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  EXPECT_EQ(ReadProcCgroup(child).status().code(), Code::kNotFound);
}

// Answers on the loop, later, as the real one does.
class FakeChildScopes : public ChildScopes {
 public:
  explicit FakeChildScopes(EventLoop& loop) : loop_(loop) {}
  void MoveIntoScope(const std::string& volume_id, int pid, std::function<void(Result<std::string>)> done) override {
    calls.push_back(pid);
    Result<std::string> r = fail ? Result<std::string>(Status::Unavailable("no bus")) : ScopeUnitName(volume_id);
    loop_.Post([r, done = std::move(done)] { done(r); });
  }
  std::vector<int> calls;
  bool fail = false;

 private:
  EventLoop& loop_;
};

class ChildScopeTest : public SupervisorTest {
 protected:
  FakeChildScopes scopes_{loop_};
};

TEST_F(ChildScopeTest, EachSpawnedServerIsMovedAndACrashedOnesReplacementToo) {
  sup().SetChildScopes(&scopes_);
  Behave("img1.map", "device=/dev/nbd3");
  ASSERT_TRUE(MapAndWait(Request("vol-1", "img1")).ok());
  int first = Snap("vol-1").pid;
  ASSERT_TRUE(RunUntil([&] { return Snap("vol-1").cgroup_mode == CgroupMode::kScope; }));
  EXPECT_EQ(Snap("vol-1").scope, "nbdkeeper-rbd-nbd-vol\\x2d1.scope");
  EXPECT_EQ(scopes_.calls, std::vector<int>{first});

  ASSERT_EQ(kill(first, SIGKILL), 0);
  ASSERT_TRUE(RunUntil([&] { return IsConnectedWithRestarts("vol-1", 1); }));
  int second = Snap("vol-1").pid;
  ASSERT_TRUE(RunUntil([&] { return Snap("vol-1").cgroup_mode == CgroupMode::kScope; }));
  EXPECT_EQ(scopes_.calls, (std::vector<int>{first, second}));
  UnmapAllAndShutdown();
}

TEST_F(ChildScopeTest, AFailedMoveLeavesTheChildServingInTheDaemonsCgroup) {
  scopes_.fail = true;
  sup().SetChildScopes(&scopes_);
  Behave("img1.map", "device=/dev/nbd3");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  ASSERT_TRUE(RunUntil([&] { return Snap("vol1").cgroup_reason.starts_with("scope failed"); }));
  auto s = Snap("vol1");
  EXPECT_EQ(s.state, MappingState::kConnected);
  EXPECT_EQ(s.cgroup_mode, CgroupMode::kDaemon);
  EXPECT_EQ(s.cgroup_reason, "scope failed: no bus");
  UnmapAllAndShutdown();
}

TEST_F(ChildScopeTest, WithoutChildScopesTheStatusSaysSo) {
  Behave("img1.map", "device=/dev/nbd3");
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  EXPECT_EQ(Snap("vol1").cgroup_mode, CgroupMode::kDaemon);
  EXPECT_EQ(Snap("vol1").cgroup_reason, "child scopes are off");
  UnmapAllAndShutdown();
}

TEST_F(ChildScopeTest, AnAdoptedServerOutsideItsScopeIsMovedIntoIt) {
  sup().SetChildScopes(&scopes_);
  pid_t server = fork();
  if (server == 0) {
    pause();
    _exit(0);
  }
  AdoptRequest adopt;
  adopt.map = Request("vol1", "img1");
  adopt.device = "/dev/nbd4";
  adopt.pid = server;
  ASSERT_TRUE(sup().Adopt(adopt).ok());
  EXPECT_EQ(scopes_.calls, std::vector<int>{server});
  ASSERT_TRUE(RunUntil([&] { return Snap("vol1").cgroup_mode == CgroupMode::kScope; }));
  sup_->ReleaseAll();
  kill(server, SIGKILL);
  waitpid(server, nullptr, 0);
  UnmapAllAndShutdown();
}

}  // namespace
}  // namespace nbdk
