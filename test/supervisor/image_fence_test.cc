// The one-writer rule (supervisor/image_fence.h): pure.
#include "supervisor/image_fence.h"

#include <gtest/gtest.h>

#include <algorithm>

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

// A brief lock holder (a resize, a snapshot, a backup's open) is waited
// for; only a writer that stays persist_ms fences, and only the same one.
TEST(ImageFenceTest, OnlyAForeignWriterThatStaysFences) {
  const CephClient kResize{"client.4300", "10.0.0.9:0/5"};
  ImageClients held{{kOurs, kSameIpStranger}, kSameIpStranger};
  ReattachCheck first = CheckMayReattach("rbd/a", held, {kOurs}, {}, 1000, 3000);
  EXPECT_EQ(first.verdict, ReattachVerdict::kWait);
  EXPECT_NE(first.why.message().find("seen for 0 ms: a brief holder leaves"), std::string::npos) << first.why.message();
  EXPECT_EQ(first.sightings, (WriterSightings{{kSameIpStranger, 1000}}));
  ReattachCheck later = CheckMayReattach("rbd/a", held, {kOurs}, first.sightings, 3999, 3000);
  EXPECT_EQ(later.verdict, ReattachVerdict::kWait) << "2999 ms";
  ReattachCheck stayed = CheckMayReattach("rbd/a", held, {kOurs}, later.sightings, 4000, 3000);
  EXPECT_EQ(stayed.verdict, ReattachVerdict::kFence);
  EXPECT_NE(stayed.why.message().find("and stayed 3000 ms"), std::string::npos) << stayed.why.message();

  // Another holder in its place is a new sighting; one that left is none.
  ReattachCheck other = CheckMayReattach("rbd/a", {{kOurs}, kResize}, {kOurs}, later.sightings, 4000, 3000);
  EXPECT_EQ(other.verdict, ReattachVerdict::kWait);
  EXPECT_EQ(other.sightings, (WriterSightings{{kResize, 4000}}));
  ReattachCheck left = CheckMayReattach("rbd/a", {{kOurs}, kOurs}, {kOurs}, other.sightings, 4500, 3000);
  EXPECT_EQ(left.verdict, ReattachVerdict::kGo);
  EXPECT_TRUE(left.sightings.empty());

  // Without the feature every foreign watcher is a writer, by the same rule.
  ImageClients open{{kOurs, kResize}, std::nullopt, false};
  EXPECT_EQ(CheckMayReattach("rbd/a", open, {kOurs}, {}, 0, 3000).verdict, ReattachVerdict::kWait);
  EXPECT_EQ(CheckMayReattach("rbd/a", open, {kOurs}, {{kResize, 0}}, 3000, 3000).verdict, ReattachVerdict::kFence);
}

TEST(ImageFenceTest, AtMostFourForeignersAreNamed) {
  ImageClients seen;
  for (int i = 0; i < 7; ++i)
    seen.watchers.push_back({"client." + std::to_string(i), "10.0.0.1:0/" + std::to_string(i)});
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

// The clients after a start, every one of them on this host unless `remote`.
ImageClients After(std::vector<CephClient> watchers, std::optional<CephClient> owner,
                   std::vector<CephClient> remote = {}) {
  ImageClients seen{watchers, owner};
  for (const CephClient& c : watchers) {
    if (std::find(remote.begin(), remote.end(), c) == remote.end()) seen.local.push_back(c);
  }
  return seen;
}

const CephClient kOtherHost{"client.4300", "10.0.0.2:0/7"};

TEST(ImageFenceTest, AnExclusiveStartIsTheLockOwnerThatWatchesFromHere) {
  ImageClients before;
  StartedClients got = IdentifyStarted(before, After({kOurs}, kOurs), true);
  EXPECT_EQ(got.own, kOurs);
  EXPECT_TRUE(got.strangers.empty());
  // Another node's map in flight beside it: ours is still the one with the
  // lock, the other is named.
  got = IdentifyStarted(before, After({kSameIpStranger, kOurs}, kOurs), true);
  EXPECT_EQ(got.own, kOurs);
  EXPECT_TRUE(got.holds_lock) << "so the other only watches";
  EXPECT_EQ(got.strangers, std::vector<CephClient>{kSameIpStranger});
}

TEST(ImageFenceTest, AnExclusiveStartWithoutItsLockProvesNoOne) {
  // The lock is someone else's (from before), elsewhere, or nobody's: the
  // new watcher is not proven ours.
  EXPECT_EQ(
      IdentifyStarted({{kSameIpStranger}, kSameIpStranger}, After({kSameIpStranger, kOurs}, kSameIpStranger), true).own,
      std::nullopt);
  StartedClients got = IdentifyStarted({}, After({kOtherHost}, kOtherHost, {kOtherHost}), true);
  EXPECT_EQ(got.own, std::nullopt);
  EXPECT_FALSE(got.holds_lock);
  EXPECT_EQ(got.strangers, std::vector<CephClient>{kOtherHost});
  EXPECT_EQ(IdentifyStarted({}, After({kOurs}, std::nullopt), true).own, std::nullopt);
  // An owner that does not watch is no live rbd-nbd.
  EXPECT_EQ(IdentifyStarted({}, After({}, kOurs), true).own, std::nullopt);
}

TEST(ImageFenceTest, WithoutALockTheOneNewLocalWatcherIsOursAndTwoAreNobody) {
  ImageClients before{{kOurs}, std::nullopt};
  StartedClients got = IdentifyStarted(before, After({kOurs, kOursLater}, std::nullopt), false);
  EXPECT_EQ(got.own, kOursLater);
  EXPECT_FALSE(got.holds_lock) << "a watcher is no lock owner";
  EXPECT_TRUE(got.strangers.empty());
  // Two appeared at once (another daemon's map beside ours): neither is
  // proven, both are strangers.
  got = IdentifyStarted(before, After({kOurs, kOursLater, kSameIpStranger}, std::nullopt), false);
  EXPECT_EQ(got.own, std::nullopt);
  EXPECT_EQ(got.strangers, (std::vector<CephClient>{kOursLater, kSameIpStranger}));
  // One, but on another host: never ours.
  got = IdentifyStarted(before, After({kOurs, kOtherHost}, std::nullopt, {kOtherHost}), false);
  EXPECT_EQ(got.own, std::nullopt);
  EXPECT_EQ(got.strangers, std::vector<CephClient>{kOtherHost});
}

TEST(ImageFenceTest, APendingClaimTakesOnlyTheOneNewClientOfThisHost) {
  ImageClients before{{kOurs}, kOurs};
  // Its watch gone, its lock left: the dead owner is claimed.
  ImageClients seen = After({}, kOursLater);
  seen.local.push_back(kOursLater);
  EXPECT_EQ(ClaimPending(before, seen).own, kOursLater);
  // Another host took the image over: never claimed, and named.
  StartedClients got = ClaimPending(before, After({kOtherHost}, kOtherHost, {kOtherHost}));
  EXPECT_EQ(got.own, std::nullopt);
  EXPECT_EQ(got.strangers, std::vector<CephClient>{kOtherHost});
  // Two new clients here: neither.
  EXPECT_EQ(ClaimPending(before, After({kOursLater, kSameIpStranger}, kSameIpStranger)).own, std::nullopt);
}

}  // namespace
}  // namespace nbdk
