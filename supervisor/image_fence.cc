#include "supervisor/image_fence.h"

#include <algorithm>

namespace nbdk {
namespace {

constexpr size_t kNamedAtMost = 4;

// Watchers first, then the lock owner when it watches no more.
std::vector<CephClient> All(const ImageClients& seen) {
  std::vector<CephClient> all = seen.watchers;
  if (seen.lock_owner) all.push_back(*seen.lock_owner);
  return all;
}

}  // namespace

ImageRole RoleOf(const MapRequest& request) {
  if (!request.image.snap.empty()) return ImageRole::kSnapshot;
  if (request.read_only || request.multi_node) return ImageRole::kUnfenced;
  return ImageRole::kSingleWriter;
}

OwnClients NotForeign(const OwnClients& own, const OwnClients& snapshot_mappings) {
  OwnClients all = own;
  all.insert(snapshot_mappings.begin(), snapshot_mappings.end());
  return all;
}

std::vector<CephClient> ForeignClients(const ImageClients& seen, const OwnClients& own) {
  std::vector<CephClient> foreign;
  for (const CephClient& c : All(seen)) {
    if (own.count(c) == 0 && std::find(foreign.begin(), foreign.end(), c) == foreign.end()) foreign.push_back(c);
  }
  return foreign;
}

namespace {

Status RefuseForeign(const std::string& image_path, const ImageClients& seen, const OwnClients& own) {
  std::vector<CephClient> foreign = ForeignClients(seen, own);
  if (foreign.empty()) return Status::Ok();
  std::string named;
  for (size_t i = 0; i < foreign.size() && i < kNamedAtMost; ++i) {
    const CephClient& c = foreign[i];
    bool watches = std::find(seen.watchers.begin(), seen.watchers.end(), c) != seen.watchers.end();
    bool locks = seen.lock_owner == c;
    named += std::string(named.empty() ? "" : ", ") + (watches ? "watcher" : "") + (watches && locks ? " and " : "") +
             (locks ? "lock owner" : "") + " " + c.ToString();
  }
  if (foreign.size() > kNamedAtMost) named += " and " + std::to_string(foreign.size() - kNamedAtMost) + " more";
  return Status::FailedPrecondition("image " + image_path + " is in use by another client: " + named);
}

}  // namespace

Status CheckMayMap(const std::string& image_path, const ImageClients& seen, const OwnClients& own) {
  ImageClients watching = seen;
  if (watching.lock_owner &&
      std::find(seen.watchers.begin(), seen.watchers.end(), *seen.lock_owner) == seen.watchers.end()) {
    watching.lock_owner.reset();
  }
  return RefuseForeign(image_path, watching, own);
}

ReattachCheck CheckMayReattach(const std::string& image_path, const ImageClients& seen, const OwnClients& own,
                               const WriterSightings& sightings, uint64_t now_ms, uint64_t persist_ms) {
  Status why = RefuseForeign(image_path, seen, own);
  if (why.ok()) return {};
  bool foreign_owner = seen.lock_owner && own.count(*seen.lock_owner) == 0;
  // A read-write opener without the lock: perhaps a cooperative writer
  // that takes it the moment it is free (header).
  if (!foreign_owner && seen.exclusive_lock) {
    return {ReattachVerdict::kWait,
            Status(why.code(), why.message() + "; it has not written: waiting for it to leave"),
            {}};
  }
  // The writers: the foreign lock owner, or without the feature every
  // foreign watcher. Each keeps its first sight while it stays.
  WriterSightings writers;
  for (const CephClient& c : foreign_owner ? std::vector<CephClient>{*seen.lock_owner} : ForeignClients(seen, own)) {
    auto it = sightings.find(c);
    writers[c] = it == sightings.end() ? now_ms : it->second;
  }
  uint64_t longest = 0;
  for (const auto& [client, since] : writers) longest = std::max(longest, now_ms - since);
  std::string because = foreign_owner ? "; it took the image's lock after this node's rbd-nbd died"
                                      : "; the image has no exclusive lock, so a watcher may be writing";
  if (longest >= persist_ms) {
    return {ReattachVerdict::kFence,
            Status(why.code(),
                   why.message() + because + (persist_ms ? " and stayed " + std::to_string(longest) + " ms" : "")),
            std::move(writers)};
  }
  return {ReattachVerdict::kWait,
          Status(why.code(), why.message() + because + "; seen for " + std::to_string(longest) +
                                 " ms: a brief holder leaves, so looking again before fencing"),
          std::move(writers)};
}

std::optional<CephClient> OwnLockToBreak(const ImageClients& seen, const OwnClients& own) {
  if (seen.lock_owner && own.count(*seen.lock_owner) != 0) return seen.lock_owner;
  return std::nullopt;
}

std::vector<CephClient> NewClients(const ImageClients& before, const ImageClients& after) {
  OwnClients known;
  for (const CephClient& c : All(before)) known.insert(c);
  return ForeignClients(after, known);
}

StartedClients IdentifyStarted(const ImageClients& before, const ImageClients& after, bool holds_lock) {
  StartedClients out;
  out.strangers = NewClients(before, after);
  auto is_new = [&](const CephClient& c) {
    return std::find(out.strangers.begin(), out.strangers.end(), c) != out.strangers.end();
  };
  auto watches = [&](const CephClient& c) {
    return std::find(after.watchers.begin(), after.watchers.end(), c) != after.watchers.end();
  };
  auto local = [&](const CephClient& c) {
    return std::find(after.local.begin(), after.local.end(), c) != after.local.end();
  };
  if (holds_lock) {
    if (after.lock_owner && is_new(*after.lock_owner) && watches(*after.lock_owner) && local(*after.lock_owner)) {
      out.own = after.lock_owner;
      out.holds_lock = true;
    }
  } else {
    std::vector<CephClient> new_watchers;
    for (const CephClient& c : out.strangers) {
      if (watches(c)) new_watchers.push_back(c);
    }
    if (new_watchers.size() == 1 && local(new_watchers[0])) out.own = new_watchers[0];
  }
  if (out.own) std::erase(out.strangers, *out.own);
  return out;
}

StartedClients ClaimPending(const ImageClients& before, const ImageClients& seen) {
  StartedClients out;
  out.strangers = NewClients(before, seen);
  std::vector<CephClient> local;
  for (const CephClient& c : out.strangers) {
    if (std::find(seen.local.begin(), seen.local.end(), c) != seen.local.end()) local.push_back(c);
  }
  if (local.size() == 1) {
    out.own = local[0];
    std::erase(out.strangers, local[0]);
  }
  return out;
}

}  // namespace nbdk
