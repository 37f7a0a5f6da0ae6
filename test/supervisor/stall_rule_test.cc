#include "supervisor/stall_rule.h"

#include <gtest/gtest.h>

namespace nbdk {
namespace {

constexpr uint64_t kLimit = 60000;

ServerProbe Ops(size_t count, double age = 1.5, int osd = 0) {
  ServerProbe p;
  p.has_admin_socket = true;
  p.ops = LibradosOps{count, count ? age : 0, count ? std::set<int>{osd} : std::set<int>{}};
  return p;
}

// Feeds samples every 5 s from t=0 with `in_flight` held and `completed`
// fixed; returns the time of the first sample that asked for a probe.
uint64_t FirstProbeAt(StallRule& rule, uint64_t from_ms = 0) {
  for (uint64_t t = from_ms;; t += 5000) {
    if (rule.Sample({1, 100}, t)) return t;
    if (t > from_ms + 1000000) return 0;
  }
}

TEST(StallRule, ADeviceThatCompletesIoIsNeverAsked) {
  StallRule rule(kLimit);
  for (uint64_t t = 0, done = 100; t < 1200000; t += 5000, ++done) {
    EXPECT_FALSE(rule.Sample({t % 10000 ? 4u : 0u, done}, t)) << "completing";
  }
  EXPECT_EQ(rule.stalled_ms(1200000), 0u);
}

// `inflight` counts reads and writes only: a flush the server never answers
// leaves it at 0 (CI: a SIGSTOPped server, its writer in fsync).
TEST(StallRule, AQuietDeviceWithNothingCountedInFlightAsksAtTheLimitToo) {
  StallRule rule(kLimit);
  uint64_t t = 0;
  while (!rule.Sample({0, 100}, t)) t += 5000;
  EXPECT_EQ(t, 65000u);
  EXPECT_EQ(rule.stalled_ms(t), 0u) << "no IO is held that the kernel counts";
  ServerProbe stopped;
  stopped.stopped = true;
  StallJudgement j = rule.Judge(stopped, t);
  EXPECT_EQ(j.verdict, StallVerdict::kStuck);
  EXPECT_NE(j.reason.find("no IO completed for 60 s"), std::string::npos) << j.reason;
  EXPECT_NE(j.reason.find("rbd-nbd is stopped"), std::string::npos) << j.reason;
}

TEST(StallRule, AnIdleServerThatAnswersIsHealthyAndAskedAgainAfterAnotherLimit) {
  StallRule rule(kLimit);
  uint64_t t = 0;
  while (!rule.Sample({0, 100}, t)) t += 5000;
  EXPECT_EQ(rule.Judge(Ops(0), t).verdict, StallVerdict::kHealthy) << "no op twice proves nothing when nothing is held";
  uint64_t asked = t;
  do t += 5000;
  while (!rule.Sample({0, 100}, t));
  EXPECT_EQ(t - asked, kLimit);
  EXPECT_EQ(rule.Judge(Ops(0), t).verdict, StallVerdict::kHealthy);
  ServerProbe silent;
  silent.has_admin_socket = true;
  silent.silent = true;
  silent.error = "no answer within 5000 ms";
  do t += 5000;
  while (!rule.Sample({0, 100}, t));
  EXPECT_EQ(rule.Judge(silent, t).verdict, StallVerdict::kUnknown) << "a loaded host gets a second chance";
  ASSERT_TRUE(rule.Sample({0, 100}, t + 5000));
  EXPECT_EQ(rule.Judge(silent, t + 5000).verdict, StallVerdict::kStuck);
}

TEST(StallRule, IoHeldAfterAQuietSpellIsTimedFromItsFirstSample) {
  StallRule rule(kLimit);
  for (uint64_t t = 0; t < 50000; t += 5000) ASSERT_FALSE(rule.Sample({0, 100}, t));
  EXPECT_EQ(FirstProbeAt(rule, 50000), 110000u) << "held from 50 s, not quiet from 5 s";
}

TEST(StallRule, HeldIoWithoutACompletionAsksAtTheLimit) {
  StallRule rule(kLimit);
  // The first stalled sample starts the clock (t=0 is the first sample, t=5 s the first stall).
  EXPECT_EQ(FirstProbeAt(rule), 65000u);
  EXPECT_EQ(rule.stalled_ms(65000), kLimit);
}

TEST(StallRule, AStoppedServerIsStuck) {
  StallRule rule(kLimit);
  uint64_t t = FirstProbeAt(rule);
  ServerProbe stopped;
  stopped.stopped = true;
  StallJudgement j = rule.Judge(stopped, t);
  EXPECT_EQ(j.verdict, StallVerdict::kStuck);
  EXPECT_NE(j.reason.find("rbd-nbd is stopped"), std::string::npos) << j.reason;
  EXPECT_NE(j.reason.find("60 s without a completion"), std::string::npos) << j.reason;
}

TEST(StallRule, ASilentAdminSocketIsStuck) {
  StallRule rule(kLimit);
  uint64_t t = FirstProbeAt(rule);
  ServerProbe silent;
  silent.has_admin_socket = true;
  silent.silent = true;
  silent.error = "no answer within 5000 ms";
  EXPECT_EQ(rule.Judge(silent, t).verdict, StallVerdict::kStuck);
}

TEST(StallRule, OpsInFlightAreTheClustersAndNeverKillTheServer) {
  StallRule rule(kLimit);
  uint64_t t = FirstProbeAt(rule);
  for (; t < 3600000; t += 5000) {
    ASSERT_TRUE(rule.Sample({1, 100}, t));
    StallJudgement j = rule.Judge(Ops(2, 61.25, 3), t);
    ASSERT_EQ(j.verdict, StallVerdict::kHeldByCluster) << j.reason;
  }
  StallJudgement j = rule.Judge(Ops(2, 61.25, 3), t);
  EXPECT_NE(j.reason.find("2 librados op(s) in flight, the oldest 61.2 s, to osd.3"), std::string::npos) << j.reason;
}

TEST(StallRule, NoOpTwiceInARowIsStuckOnceIsNot) {
  StallRule rule(kLimit);
  uint64_t t = FirstProbeAt(rule);
  EXPECT_EQ(rule.Judge(Ops(0), t).verdict, StallVerdict::kUnknown);
  ASSERT_TRUE(rule.Sample({1, 100}, t + 5000));
  EXPECT_EQ(rule.Judge(Ops(0), t + 5000).verdict, StallVerdict::kStuck);
}

TEST(StallRule, AnOpBetweenTwoIdleProbesStartsTheCountAgain) {
  StallRule rule(kLimit);
  uint64_t t = FirstProbeAt(rule);
  EXPECT_EQ(rule.Judge(Ops(0), t).verdict, StallVerdict::kUnknown);
  EXPECT_EQ(rule.Judge(Ops(1), t + 5000).verdict, StallVerdict::kHeldByCluster);
  EXPECT_EQ(rule.Judge(Ops(0), t + 10000).verdict, StallVerdict::kUnknown);
}

TEST(StallRule, WithoutAnAdminSocketTheRuleDoesNotGuess) {
  StallRule rule(kLimit);
  uint64_t t = FirstProbeAt(rule);
  ServerProbe none;
  StallJudgement j = rule.Judge(none, t);
  EXPECT_EQ(j.verdict, StallVerdict::kUnknown);
  EXPECT_NE(j.reason.find("no admin socket"), std::string::npos) << j.reason;
  ServerProbe unreadable;
  unreadable.has_admin_socket = true;
  unreadable.error = "objecter_requests: no \"ops\" array";
  EXPECT_EQ(rule.Judge(unreadable, t).verdict, StallVerdict::kUnknown);
}

TEST(StallRule, StuckAgainWithoutProgressDoublesTheLimitUpToEightTimes) {
  StallRule rule(kLimit);
  ServerProbe stopped;
  stopped.stopped = true;
  uint64_t expected[] = {kLimit, 2 * kLimit, 4 * kLimit, 8 * kLimit, 8 * kLimit};
  uint64_t t = 0;
  for (uint64_t limit : expected) {
    EXPECT_EQ(rule.limit_ms(), limit);
    rule.Restart();  // the re-attached server; still no completion
    uint64_t start = t;
    t = FirstProbeAt(rule, start);
    // The very first sample has nothing to compare with; after a restart
    // the device's counters carry on, and the first sample starts the clock.
    EXPECT_EQ(t - start, limit + (start == 0 ? 5000 : 0));
    EXPECT_EQ(rule.Judge(stopped, t).verdict, StallVerdict::kStuck);
    t += 5000;
  }
  // A completion resets the backoff, also the first one after a restart.
  rule.Restart();
  rule.Sample({1, 101}, t);
  EXPECT_EQ(rule.limit_ms(), kLimit);
}

TEST(StallRule, ALimitOfZeroNeverAsks) {
  StallRule rule(0);
  for (uint64_t t = 0; t < 600000; t += 5000) EXPECT_FALSE(rule.Sample({t % 10000 ? 1u : 0u, 100}, t));
}

TEST(ServerProbeParse, ObjecterRequestsCountsOpsNotWatches) {
  auto ops = ParseObjecterRequests(R"({"ops":[{"tid":1,"osd":0,"age":0.5},{"tid":2,"osd":2,"age":12.25}],
      "linger_ops":[{"linger_id":1,"osd":0}],"pool_ops":[],"command_ops":[]})");
  ASSERT_TRUE(ops.ok()) << ops.status().ToString();
  EXPECT_EQ(ops->count, 2u);
  EXPECT_EQ(ops->osds, (std::set<int>{0, 2}));
  EXPECT_DOUBLE_EQ(ops->oldest_age_s, 12.25);
  auto none = ParseObjecterRequests(R"({"ops":[],"linger_ops":[{"linger_id":1,"osd":0}]})");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->count, 0u);
}

TEST(ServerProbeParse, ObjecterRequestsRejectsWhatItCannotRead) {
  for (const char* bad :
       {"", "[]", "{\"ops\":{}}", "{\"linger_ops\":[]}", "{\"ops\":[{\"osd\":\"0\",\"age\":1}]}",
        "{\"ops\":[{\"osd\":0}]}", "{\"ops\":[{\"osd\":0,\"age\":-1}]}", "{\"ops\":[1]}", "{\"ops\":["}) {
    EXPECT_EQ(ParseObjecterRequests(bad).status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST(ServerProbeParse, ProcessStateIsTheFieldAfterTheCommandName) {
  EXPECT_EQ(*ParseProcessState("42 (rbd-nbd) S 1 42 42 0"), 'S');
  EXPECT_EQ(*ParseProcessState("42 (a) b) T 1"), 'T') << "a command name with a parenthesis";
  EXPECT_FALSE(ParseProcessState("42 (rbd-nbd)").ok());
  EXPECT_FALSE(ParseProcessState("").ok());
}

}  // namespace
}  // namespace nbdk
