// The one-writer rule (supervisor/image_fence.h): pure.
#include "supervisor/image_fence.h"

#include <gtest/gtest.h>

namespace nbdk {
namespace {

const CephClient kOurs{"client.4100", "127.0.0.1:0/11"};
const CephClient kOursLater{"client.4101", "127.0.0.1:0/12"};
// Same host, same IP: another node played by a second daemon, or a
// client behind the same NAT. Only entity and nonce tell them apart.
const CephClient kSameIpStranger{"client.4200", "127.0.0.1:0/99"};
const CephClient kSameEntityOtherNonce{"client.4100", "127.0.0.1:0/12"};

TEST(ImageFenceTest, NoClientsOrOnlyOursIsNoForeigner) {
  EXPECT_EQ(CheckMayReattach("rbd/a", {}, {}).verdict, ReattachVerdict::kGo);
  EXPECT_TRUE(CheckMayMap("rbd/a", {}, {}).ok());
  ImageClients seen{{kOurs}, kOurs};
  EXPECT_EQ(CheckMayReattach("rbd/a", seen, {kOurs}).verdict, ReattachVerdict::kGo);
  EXPECT_TRUE(CheckMayMap("rbd/a", seen, {kOurs}).ok());
  EXPECT_TRUE(ForeignClients(seen, {kOurs, kOursLater}).empty());
}

TEST(ImageFenceTest, AStrangerOnTheSameIpIsForeignNamedWithItsNonce) {
  ImageClients seen{{kOurs, kSameIpStranger}, kOurs};
  Status s = CheckMayMap("rbd/a", seen, {kOurs});
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_EQ(s.message(), "image rbd/a is in use by another client: watcher client.4200@127.0.0.1:0/99");
  EXPECT_EQ(ForeignClients({{kSameEntityOtherNonce}, std::nullopt}, {kOurs}),
            std::vector<CephClient>{kSameEntityOtherNonce});
}

TEST(ImageFenceTest, AForeignLockOwnerWithoutWatchRefusesAReattachButNotAMap) {
  // It is dead (librbd breaks its lock for the next writer), but it wrote
  // after this node's mount was made.
  ImageClients seen{{kOurs}, kSameIpStranger};
  ReattachCheck check = CheckMayReattach("rbd/a", seen, {kOurs});
  EXPECT_EQ(check.verdict, ReattachVerdict::kFence);
  EXPECT_EQ(check.why.message(),
            "image rbd/a is in use by another client: lock owner client.4200@127.0.0.1:0/99; it took the image's lock "
            "after this node's rbd-nbd died");
  EXPECT_TRUE(CheckMayMap("rbd/a", seen, {kOurs}).ok());
  EXPECT_TRUE(CheckMayMap("rbd/a", {{}, kSameIpStranger}, {}).ok());
  EXPECT_EQ(CheckMayMap("rbd/a", {{kSameIpStranger}, kSameIpStranger}, {}).message(),
            "image rbd/a is in use by another client: watcher and lock owner client.4200@127.0.0.1:0/99");
  ImageClients both{{kSameIpStranger}, kSameIpStranger};
  EXPECT_EQ(CheckMayMap("rbd/a", both, {}).message(),
            "image rbd/a is in use by another client: watcher and lock owner client.4200@127.0.0.1:0/99");
  EXPECT_EQ(ForeignClients(both, {}).size(), 1u) << "one client, listed once";
}

TEST(ImageFenceTest, AForeignWatcherWithoutTheLockIsWaitedForUnlessAnyWatcherMayWrite) {
  // Our dead rbd-nbd still owns the lock: the stranger has not written.
  ImageClients seen{{kOurs, kSameIpStranger}, kOurs};
  ReattachCheck check = CheckMayReattach("rbd/a", seen, {kOurs});
  EXPECT_EQ(check.verdict, ReattachVerdict::kWait);
  EXPECT_NE(check.why.message().find("watcher client.4200@127.0.0.1:0/99; it has not written"), std::string::npos)
      << check.why.message();
  EXPECT_EQ(CheckMayReattach("rbd/a", {{kSameIpStranger}, std::nullopt}, {kOurs}).verdict, ReattachVerdict::kWait);
  seen.exclusive_lock = false;
  check = CheckMayReattach("rbd/a", seen, {kOurs});
  EXPECT_EQ(check.verdict, ReattachVerdict::kFence);
  EXPECT_NE(check.why.message().find("no exclusive lock"), std::string::npos) << check.why.message();
}

TEST(ImageFenceTest, AtMostFourForeignersAreNamed) {
  ImageClients seen;
  for (int i = 0; i < 7; ++i) seen.watchers.push_back({"client." + std::to_string(i), "10.0.0.1:0/" + std::to_string(i)});
  std::string m = CheckMayMap("rbd/a", seen, {}).message();
  EXPECT_NE(m.find("client.3@"), std::string::npos) << m;
  EXPECT_EQ(m.find("client.4@"), std::string::npos) << m;
  EXPECT_NE(m.find(" and 3 more"), std::string::npos) << m;
}

TEST(ImageFenceTest, OnlyOurOwnLockIsBroken) {
  EXPECT_EQ(OwnLockToBreak({{}, kOurs}, {kOurs}), kOurs);
  EXPECT_EQ(OwnLockToBreak({{}, kSameIpStranger}, {kOurs}), std::nullopt);
  EXPECT_EQ(OwnLockToBreak({{}, kSameEntityOtherNonce}, {kOurs}), std::nullopt);
  EXPECT_EQ(OwnLockToBreak({{kOurs}, std::nullopt}, {kOurs}), std::nullopt);
}

TEST(ImageFenceTest, ASnapshotIsNeitherFencedNorAWriterAndOnlyReadOnlyOrSharedHeadsGoUnfenced) {
  MapRequest r;
  r.image = {"rbd", "", "a", {}, "", "u", "/k"};
  EXPECT_EQ(RoleOf(r), ImageRole::kSingleWriter);
  r.multi_node = true;
  EXPECT_EQ(RoleOf(r), ImageRole::kUnfenced);
  r.multi_node = false;
  r.read_only = true;
  EXPECT_EQ(RoleOf(r), ImageRole::kUnfenced);
  r.image.snap = "monday";
  EXPECT_EQ(RoleOf(r), ImageRole::kSnapshot);
}

// This node's snapshot mapping of the image watches it: a writer's checks
// pass it by, and still never break a lock because of it.
TEST(ImageFenceTest, ASnapshotMappingsClientIsNotForeignButNeverOneWhoseLockIsBroken) {
  const CephClient snapshot{"client.4300", "127.0.0.1:0/30"};
  ImageClients seen{{kOurs, snapshot}, kOurs};
  EXPECT_EQ(CheckMayMap("rbd/a", seen, {kOurs}).code(), Code::kFailedPrecondition) << "unknown, it is foreign";
  OwnClients not_foreign = NotForeign({kOurs}, {snapshot});
  EXPECT_TRUE(CheckMayMap("rbd/a", seen, not_foreign).ok());
  EXPECT_EQ(CheckMayReattach("rbd/a", seen, not_foreign).verdict, ReattachVerdict::kGo);
  EXPECT_EQ(OwnLockToBreak({{snapshot}, snapshot}, {kOurs}), std::nullopt);
  // A stranger beside it stays one.
  seen.watchers.push_back(kSameIpStranger);
  EXPECT_EQ(CheckMayReattach("rbd/a", seen, not_foreign).verdict, ReattachVerdict::kWait);
}

TEST(ImageFenceTest, NewClientsAreWhatAppearedSinceBefore) {
  ImageClients before{{kOurs}, kOurs};
  ImageClients after{{kOurs, kOursLater}, kOursLater};
  EXPECT_EQ(NewClients(before, after), std::vector<CephClient>{kOursLater});
  EXPECT_TRUE(NewClients(after, before).empty());
  EXPECT_EQ(NewClients({}, {{}, kOurs}), std::vector<CephClient>{kOurs});
}

}  // namespace
}  // namespace nbdk
