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

ReattachCheck CheckMayReattach(const std::string& image_path, const ImageClients& seen, const OwnClients& own) {
  Status why = RefuseForeign(image_path, seen, own);
  if (why.ok()) return {};
  bool foreign_owner = seen.lock_owner && own.count(*seen.lock_owner) == 0;
  if (foreign_owner || !seen.exclusive_lock) {
    std::string because = foreign_owner ? "; it took the image's lock after this node's rbd-nbd died"
                                        : "; the image has no exclusive lock, so a watcher may be writing";
    return {ReattachVerdict::kFence, Status(why.code(), why.message() + because)};
  }
  return {ReattachVerdict::kWait, Status(why.code(), why.message() + "; it has not written: waiting for it to leave")};
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

}  // namespace nbdk
