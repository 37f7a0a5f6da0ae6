// Supervisor with a bound on concurrent rbd-nbd starts
// (SupervisorConfig::max_concurrent_attaches, supervisor/attach_queue.h):
// the bound, the deadline counted from the start, the order, and every way a
// slot or a place in the queue is given up.
#include <signal.h>
#include <sys/wait.h>

#include "test/supervisor/supervisor_fixture.h"

namespace nbdk {
namespace {

class SupervisorAttachQueueTest : public SupervisorTest {
 protected:
  // Maps `count` volumes vol<i> on img<i> (/dev/nbd<i>) without waiting.
  void MapMany(int count, std::vector<std::optional<Result<std::string>>>& results) {
    results.resize(count);
    for (int i = 0; i < count; ++i) {
      std::string n = std::to_string(i);
      sup().Map(Request("vol" + n, "img" + n), [&results, i](Result<std::string> r) { results[i] = std::move(r); });
    }
  }
  // Runs until `pred`, recording the most attach slots ever in use.
  bool RunTrackingInFlight(const std::function<bool()>& pred, size_t* most, uint64_t timeout_ms = 10000) {
    return RunUntil(
        [&] {
          *most = std::max(*most, sup().attaches_in_flight());
          return pred();
        },
        timeout_ms);
  }
  // The order rbd-nbd was started in, as "map img3" / "attach /dev/nbd1".
  std::vector<std::string> Starts() {
    std::vector<std::string> out;
    for (const std::string& line : ArgvLog()) {
      if (line.find(" map ") != std::string::npos) out.push_back("map " + line.substr(line.rfind('/') + 1));
      size_t dev = line.find("--device ");
      if (dev != std::string::npos) out.push_back("attach " + line.substr(dev + 9, line.find(' ', dev + 9) - dev - 9));
    }
    return out;
  }
};

TEST_F(SupervisorAttachQueueTest, AtMostKMapsRunAndEachDeadlineStartsWhenItsMapDoes) {
  config_.max_concurrent_attaches = 2;
  // Against a 700 ms deadline: img0 and img1 take 300 and 600 ms, the
  // others 400 ms each. img2 starts at 300, img3 at 600, img4 at 700 and
  // ends at 1100 ms: past a deadline counted from Map().
  config_.map_deadline_ms = 700;
  for (int i = 0; i < 5; ++i) {
    int delay = i == 0 ? 300 : i == 1 ? 600 : 400;
    Behave("img" + std::to_string(i) + ".map",
           "device=/dev/nbd" + std::to_string(i) + " delay_ms=" + std::to_string(delay));
  }
  std::vector<std::optional<Result<std::string>>> results;
  MapMany(5, results);
  RunFor(50);
  EXPECT_EQ(Snap("vol0").attach_queue_position, 0u);
  EXPECT_EQ(Snap("vol2").attach_queue_position, 1u);
  EXPECT_EQ(Snap("vol4").attach_queue_position, 3u);
  EXPECT_EQ(Snap("vol4").state, MappingState::kMapping);
  EXPECT_EQ(sup().attaches_waiting(), 3u);
  size_t most = 0;
  ASSERT_TRUE(RunTrackingInFlight(
      [&] { return std::all_of(results.begin(), results.end(), [](const auto& r) { return r.has_value(); }); }, &most));
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(results[i]->ok()) << i << ": " << results[i]->status().ToString();
  EXPECT_EQ(most, 2u);
  EXPECT_EQ(sup().attaches_in_flight(), 0u) << "a slot frees when its map printed the device";
  // FIFO: the queued three started in the order they were asked for.
  auto starts = Starts();
  ASSERT_EQ(starts.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(starts.begin() + 2, starts.end()),
            (std::vector<std::string>{"map img2", "map img3", "map img4"}));
  UnmapAllAndShutdown();
}

TEST_F(SupervisorAttachQueueTest, UnmapOfAQueuedMapCallsItOffAndTheQueueMovesOn) {
  config_.max_concurrent_attaches = 1;
  Behave("img0.map", "device=/dev/nbd0 delay_ms=300");
  Behave("img2.map", "device=/dev/nbd2");
  std::vector<std::optional<Result<std::string>>> results;
  MapMany(3, results);
  RunFor(50);
  ASSERT_EQ(Snap("vol1").attach_queue_position, 1u);
  std::optional<Status> unmapped;
  sup().Unmap("vol1", [&](Status s) { unmapped = s; });
  ASSERT_TRUE(unmapped.has_value()) << "nothing to wait for: no rbd-nbd was started";
  EXPECT_TRUE(unmapped->ok()) << unmapped->ToString();
  ASSERT_TRUE(results[1].has_value());
  EXPECT_EQ(results[1]->status().code(), Code::kAborted);
  EXPECT_FALSE(sup().Snapshot("vol1").has_value());
  EXPECT_EQ(Snap("vol2").attach_queue_position, 1u);
  ASSERT_TRUE(RunUntil([&] { return results[0].has_value() && results[2].has_value(); }));
  EXPECT_TRUE(results[0]->ok());
  EXPECT_TRUE(results[2]->ok());
  EXPECT_EQ(Starts(), (std::vector<std::string>{"map img0", "map img2"}));
  UnmapAllAndShutdown();
}

TEST_F(SupervisorAttachQueueTest, ASlotFreesWhenItsMapFailsOrIsKilledAtTheDeadline) {
  config_.max_concurrent_attaches = 1;
  config_.map_deadline_ms = 500;
  Behave("img0.map", "mode=exit exit_code=1");
  Behave("img1.map", "mode=hang");
  Behave("img2.map", "device=/dev/nbd2 delay_ms=250");  // 250 of 500 ms, after 500 ms queued
  std::vector<std::optional<Result<std::string>>> results;
  MapMany(3, results);
  ASSERT_TRUE(RunUntil([&] { return results[2].has_value(); }));
  ASSERT_TRUE(results[0].has_value() && results[1].has_value());
  EXPECT_EQ(results[0]->status().code(), Code::kUnavailable);
  EXPECT_EQ(results[1]->status().code(), Code::kDeadlineExceeded);
  EXPECT_TRUE(results[2]->ok()) << results[2]->status().ToString();
  EXPECT_EQ(Starts(), (std::vector<std::string>{"map img0", "map img1", "map img2"}));
  EXPECT_EQ(sup().attaches_in_flight(), 0u);
  UnmapAllAndShutdown();
}

TEST_F(SupervisorAttachQueueTest, ReattachesGoBeforeQueuedMapsAndTheirSlotsFreeOnSuccess) {
  config_.max_concurrent_attaches = 1;
  config_.map_deadline_ms = 400;
  for (int i = 0; i < 2; ++i) Behave("img" + std::to_string(i) + ".map", "device=/dev/nbd" + std::to_string(i));
  ASSERT_TRUE(MapAndWait(Request("vol0", "img0")).ok());
  ASSERT_TRUE(MapAndWait(Request("vol1", "img1")).ok());
  Behave("hang.map", "mode=hang");  // holds the only slot for 400 ms
  Behave("img3.map", "device=/dev/nbd3");
  std::optional<Result<std::string>> hang, map3;
  sup().Map(Request("v-hang", "hang"), [&](Result<std::string> r) { hang = std::move(r); });
  RunFor(50);
  sup().Map(Request("vol3", "img3"), [&](Result<std::string> r) { map3 = std::move(r); });
  kill(Snap("vol1").pid, SIGKILL);
  ASSERT_TRUE(RunUntil([&] { return Snap("vol1").state == MappingState::kDead; }));
  kill(Snap("vol0").pid, SIGKILL);
  ASSERT_TRUE(RunUntil([&] { return Snap("vol0").state == MappingState::kDead; }));
  RunFor(50);
  EXPECT_EQ(Snap("vol1").attach_queue_position, 1u);
  EXPECT_EQ(Snap("vol0").attach_queue_position, 2u);
  EXPECT_EQ(Snap("vol3").attach_queue_position, 3u);
  ASSERT_TRUE(RunUntil(
      [&] { return map3.has_value() && IsConnectedWithRestarts("vol0", 1) && IsConnectedWithRestarts("vol1", 1); }));
  EXPECT_TRUE(map3->ok());
  EXPECT_EQ(Starts(), (std::vector<std::string>{"map img0", "map img1", "map hang", "attach /dev/nbd1",
                                                "attach /dev/nbd0", "map img3"}));
  EXPECT_EQ(sup().attaches_in_flight(), 0u);
  UnmapAllAndShutdown();
}

TEST_F(SupervisorAttachQueueTest, AReattachStillQueuedAtItsDeadlineExpiresSayingSo) {
  config_.max_concurrent_attaches = 1;
  config_.reattach_timeout_s = 2;  // attempts stop 1 s after the death
  config_.reattach_safety_margin_ms = 1000;
  config_.map_deadline_ms = 2500;
  Behave("img0.map", "device=/dev/nbd0");
  ASSERT_TRUE(MapAndWait(Request("vol0", "img0")).ok());
  Behave("hang.map", "mode=hang");
  std::optional<Result<std::string>> hang;
  sup().Map(Request("v-hang", "hang"), [&](Result<std::string> r) { hang = std::move(r); });
  RunFor(50);
  kill(Snap("vol0").pid, SIGKILL);
  ASSERT_TRUE(RunUntil([&] { return Snap("vol0").state == MappingState::kExpired; }, 5000));
  auto s = Snap("vol0");
  EXPECT_NE(s.reason.find("still waiting for an attach slot at place 1 (1 in flight, limit 1)"), std::string::npos)
      << s.reason;
  EXPECT_EQ(s.attach_queue_position, 0u) << "an expired mapping left the queue";
  EXPECT_EQ(sup().attaches_waiting(), 0u);
  EXPECT_EQ(CountArgv(" attach "), 0);
  ASSERT_TRUE(RunUntil([&] { return hang.has_value(); }, 5000));
  UnmapAllAndShutdown();
}

TEST_F(SupervisorAttachQueueTest, ReleaseAllGivesUpEveryPlaceAndSlot) {
  config_.max_concurrent_attaches = 1;
  Behave("img0.map", "device=/dev/nbd0 delay_ms=200");
  std::vector<std::optional<Result<std::string>>> results;
  MapMany(3, results);
  RunFor(50);
  EXPECT_EQ(sup().attaches_in_flight(), 1u);
  EXPECT_EQ(sup().attaches_waiting(), 2u);
  int pid = Snap("vol0").pid;
  ASSERT_GT(pid, 0);
  sup().ReleaseAll();
  EXPECT_EQ(sup().attaches_in_flight(), 0u);
  EXPECT_EQ(sup().attaches_waiting(), 0u);
  for (const auto& r : results) {
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status().code(), Code::kAborted);
  }
  RunFor(100);
  EXPECT_EQ(CountArgv(" map "), 1) << "nothing queued starts after a release";
  // libuv forgot the map child: reap it here, by pid.
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  UnmapAllAndShutdown();
}

}  // namespace
}  // namespace nbdk
