// Mapping: the image's other clients before each start, and this volume's
// own clients after it (the rule: supervisor/image_fence.h).
#include "base/log.h"
#include "supervisor/mapping.h"

namespace nbdk {
namespace {

std::string Names(const std::vector<CephClient>& clients) {
  std::string out;
  for (const CephClient& c : clients) out += (out.empty() ? "" : ",") + c.ToString();
  return out;
}

}  // namespace

Status InUseBy(const std::string& image_path, const std::vector<CephClient>& strangers, const char* during) {
  return Status::FailedPrecondition("image " + image_path + " is in use by another client: " + Names(strangers) +
                                    ", which appeared during the " + during);
}

OwnClients Mapping::NotForeignClients() const {
  return NotForeign(own_clients_, env_.snapshot_clients ? env_.snapshot_clients(request_.image.Path()) : OwnClients{});
}

void Mapping::CheckClientsBeforeMap() {
  std::weak_ptr<bool> weak = alive_;
  uint64_t epoch = epoch_;
  env_.lock_breaker.ListClients(request_.image, [this, weak, epoch](Result<ImageClients> seen) {
    if (weak.expired() || epoch != epoch_ || state_ != MappingState::kMapping) return;
    if (!seen.ok()) return FailMap(seen.status().WithContext("list the clients of image " + request_.image.Path()));
    if (Fenceable()) {
      if (Status s = CheckMayMap(request_.image.Path(), *seen, NotForeignClients()); !s.ok()) return FailMap(s);
    }
    before_start_ = std::move(seen).value();
    SpawnMap();
  });
}

// The attach starts once the image's clients are known and none is
// foreign; the lock break then names a dead owner of ours only, and runs
// beside the attach, so the outage is not the sum of the break's cluster
// round trips and the attach.
void Mapping::CheckClientsBeforeAttach() {
  std::weak_ptr<bool> weak = alive_;
  uint64_t epoch = epoch_;
  env_.lock_breaker.ListClients(request_.image, [this, weak, epoch](Result<ImageClients> seen) {
    if (weak.expired() || epoch != epoch_ || state_ != MappingState::kReattaching) return;
    // Unproven is not safe: no attach until the clients are known.
    if (!seen.ok()) return OnAttachFailed("list the image's clients: " + seen.status().message());
    ClaimPendingClients(*seen);
    if (Fenceable()) {
      ReattachCheck check = CheckMayReattach(request_.image.Path(), *seen, NotForeignClients(), foreign_writers_,
                                             env_.loop.NowMs(), env_.config.foreign_writer_persist_ms);
      foreign_writers_ = std::move(check.sightings);
      if (check.verdict == ReattachVerdict::kFence) return Fence(check.why.message());
      if (check.verdict == ReattachVerdict::kWait) return OnAttachFailed(check.why.message());
    }
    before_start_ = std::move(seen).value();
    // A snapshot's own clients never held the lock: an owner among them
    // is a writer's, perhaps this node's own live one.
    if (RoleOf(request_) == ImageRole::kSnapshot) return SpawnAttach();
    if (std::optional<CephClient> owner = OwnLockToBreak(before_start_, own_clients_)) {
      env_.lock_breaker.BreakLock(request_.image, *owner, [this, weak](Status s) {
        if (weak.expired() || s.ok()) return;
        // Not fatal: the attach still works, its IO just waits for the OSDs
        // to time the dead client's watch out (~30 s).
        ++env_.stats.counters.lock_break_failures;
        NBDK_LOG_WARN("lock_break_failed",
                      {{"volume", request_.volume_id}, {"image", request_.image.Path()}, {"error", s.ToString()}});
      });
    }
    SpawnAttach();
  });
}

// The device will never be served again: it is released as an expired one
// is, at once, so that its IO (a stale mount's) fails now instead of at the
// kernel's deadline, and an unstage's unmount does not wait for that. The kernel
// keeps the disconnected device while it is open, so no other map can take
// its index under the mount.
void Mapping::Fence(std::string reason) {
  ++env_.stats.counters.fencings;
  CancelPending();
  ++epoch_;
  Transition(MappingState::kFenced, std::move(reason));
  NBDK_LOG_ERROR("mapping_fenced", {{"volume", request_.volume_id},
                                    {"device", device_},
                                    {"own_clients", Names({own_clients_.begin(), own_clients_.end()})},
                                    {"reason", reason_}});
  ReleaseDevice("fenced_device_released", "a stale mount's IO fails now");
}

// A server that died (or whose daemon did) before its own clients were
// known: the one new client of this host since its start, if exactly one
// (ClaimPending); a stranger stays foreign to the check that follows.
void Mapping::ClaimPendingClients(const ImageClients& seen) {
  if (!server_clients_pending_) return;
  server_clients_pending_ = false;
  LearnOwnClient(ClaimPending(before_start_, seen));
  if (env_.on_server_changed) env_.on_server_changed(request_.volume_id);
}

void Mapping::LearnOwnClient(const StartedClients& started) {
  if (!started.own || !own_clients_.insert(*started.own).second) return;
  NBDK_LOG_INFO("own_clients", {{"volume", request_.volume_id},
                                {"new", started.own->ToString()},
                                {"all", Names({own_clients_.begin(), own_clients_.end()})}});
}

void Mapping::IdentifyOwnClients(ImageClients before, bool holds_lock,
                                 std::function<void(Result<StartedClients>)> then) {
  std::weak_ptr<bool> weak = alive_;
  uint64_t generation = server_generation_;
  env_.lock_breaker.ListClients(request_.image, [this, weak, generation, holds_lock, before = std::move(before),
                                                 then = std::move(then)](Result<ImageClients> seen) {
    if (weak.expired()) return;
    if (!seen.ok()) {
      // Its lock will not be broken after a death, and its watch counts
      // as foreign until the OSDs drop it: safe, only slower.
      NBDK_LOG_WARN("own_clients_unknown", {{"volume", request_.volume_id}, {"error", seen.status().ToString()}});
      return then(seen.status());
    }
    StartedClients started = IdentifyStarted(before, *seen, holds_lock);
    LearnOwnClient(started);
    // What could be proven is known now: nothing is claimed later, and
    // the journal drops the clients from before its start.
    bool known = server_clients_pending_ && generation == server_generation_;
    if (known) server_clients_pending_ = false;
    if ((started.own || known) && env_.on_server_changed) env_.on_server_changed(request_.volume_id);
    then(std::move(started));
  });
}

void Mapping::FailLockedOutMap(Status failed) {
  std::weak_ptr<bool> weak = alive_;
  uint64_t epoch = epoch_;
  env_.lock_breaker.ListClients(request_.image, [this, weak, epoch, failed](Result<ImageClients> seen) {
    if (weak.expired() || epoch != epoch_ || state_ != MappingState::kMapping) return;
    if (seen.ok() && seen->lock_owner && NotForeignClients().count(*seen->lock_owner) == 0) {
      return FailMap(Status::FailedPrecondition("image " + request_.image.Path() +
                                                " is in use by another client: lock owner " +
                                                seen->lock_owner->ToString() + "; " + failed.message()));
    }
    FailMap(failed);
  });
}

// Disconnected the way an unmap is (rbd-nbd unmap, then the server's exit
// awaited), so nothing serves the device when the map's callers hear of it.
void Mapping::RefuseMap(Status why) {
  std::vector<MapDone> waiters = std::move(map_waiters_);
  map_waiters_.clear();
  ++env_.stats.counters.maps_failed;
  Log(LogLevel::kWarn, "map_refused", {{"volume", request_.volume_id}, {"device", device_}, {"reason", why.message()}});
  Unmap([waiters = std::move(waiters), why](Status unmapped) mutable {
    Status answer =
        unmapped.ok() ? why : Status(why.code(), why.message() + "; the unmap failed: " + unmapped.message());
    for (auto& w : waiters) w(answer);
  });
}

}  // namespace nbdk
