#include "supervisor/rbd_lock_breaker.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/base/log.h"
#include "journal/ceph/ceph_address.h"
#include "journal/ceph/image_lock.h"
#include "journal/ceph/rados_cluster.h"
#include "journal/ceph/rbd_image.h"

namespace nbdk {
namespace {

using Clock = std::chrono::steady_clock;

// What one call found and did; logged as the lock_break event.
struct BreakOutcome {
  Status status;
  std::string owner;       // empty: no owner seen
  int owner_watches = -1;  // watches on the header at the owner's address; -1: unknown
  std::string outcome = "error";
  int64_t owner_seen_ms = -1;
  bool break_needed = false;  // a local owner was seen: step 2 breaks it
};

// BLOCKING. Step 1: who owns the lock now, and may we break it?
void SeeOwner(const std::shared_ptr<RadosCluster>& cluster, const ImageSpec& spec, BreakOutcome& out) {
  const std::string image_path = spec.Path();
  auto fail = [&](Status status) { out.status = status.WithContext("break lock of image " + image_path); };
  Result<std::vector<std::string>> host_ips = HostIpAddresses();
  if (!host_ips.ok()) return fail(host_ips.status());
  Result<IoCtx> io = IoCtx::Open(cluster, spec.pool, spec.rados_namespace);
  if (!io.ok()) return fail(io.status());
  Result<std::optional<std::string>> owner = ExclusiveLockOwner(*cluster, *io, spec.image);
  if (!owner.ok()) return fail(owner.status());
  if (!owner->has_value()) {
    out.outcome = "no_owner";
    return;
  }
  out.owner = **owner;
  if (!IsLocalAddress(out.owner, *host_ips)) {
    Result<std::vector<std::string>> parsed = CephAddressIps(out.owner);
    std::string why = parsed.ok() ? "is not an address of this host" : parsed.status().message();
    out.outcome = "foreign_owner";
    out.status = Status::FailedPrecondition("image " + image_path + ": exclusive lock owner " + out.owner + " " + why +
                                            "; only a lock of this host's dead rbd-nbd is broken");
    return;
  }
  out.break_needed = true;
}

// BLOCKING. Step 2: break the lock of the owner step 1 saw, and only that
// owner's: librbd re-reads the lock and refuses (EBUSY) when it moved.
void BreakOwner(const std::shared_ptr<RadosCluster>& cluster, const ImageSpec& spec, BreakOutcome& out) {
  auto fail = [&](Status status) { out.status = status.WithContext("break lock of image " + spec.Path()); };
  Result<IoCtx> io = IoCtx::Open(cluster, spec.pool, spec.rados_namespace);
  if (!io.ok()) return fail(io.status());
  Result<RbdImage> image = OpenImage(*io, spec.image, false, "open");
  if (!image.ok()) return fail(image.status());
  out.owner_watches = CountWatchesAt(*cluster, image->get(), out.owner);
  int rc = BreakExclusiveLock(*cluster, image->get(), out.owner);
  switch (-rc) {
    case 0:
      out.outcome = "broken";
      return;
    case ENOENT:  // released (or timed out) between our look and the break
      out.outcome = "no_owner";
      return;
    case EBUSY:
    case EAGAIN:
      out.outcome = "owner_changed";
      out.status = Status::Aborted("image " + spec.Path() + ": the exclusive lock moved away from " + out.owner +
                                   " while breaking it; nothing was broken");
      return;
    case EACCES:
    case EPERM:
      return fail(Status::FailedPrecondition("blocklist lock owner " + out.owner +
                                             ": permission denied (the cephx user needs mon caps 'profile rbd')"));
    default:
      return fail(StatusFromRados(rc, "break the exclusive lock of " + out.owner));
  }
}

void LogOutcome(const ImageSpec& spec, Clock::time_point start, const BreakOutcome& out) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  std::string owner = out.owner.empty() ? "-" : out.owner;
  if (out.status.ok()) {
    NBDK_LOG_INFO("lock_break", {{"image", spec.Path()},
                                 {"owner", owner},
                                 {"owner_watches", out.owner_watches},
                                 {"owner_seen_ms", out.owner_seen_ms},
                                 {"duration_ms", ms},
                                 {"outcome", out.outcome}});
  } else {
    NBDK_LOG_WARN("lock_break", {{"image", spec.Path()},
                                 {"owner", owner},
                                 {"owner_watches", out.owner_watches},
                                 {"owner_seen_ms", out.owner_seen_ms},
                                 {"duration_ms", ms},
                                 {"outcome", out.outcome},
                                 {"error", out.status.ToString()}});
  }
}

}  // namespace

RbdLockBreaker::RbdLockBreaker(EventLoop& loop, RadosClients& clients, int timeout_s)
    : loop_(loop), clients_(clients), timeout_s_(timeout_s) {}

void RbdLockBreaker::BreakDeadOwnerLock(const ImageSpec& image, std::function<void()> owner_seen,
                                        std::function<void(Status)> done) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  const Clock::time_point start = Clock::now();
  auto out = std::make_shared<BreakOutcome>();
  if (image.pool.empty() || image.image.empty()) {
    out->status = Status::InvalidArgument("break lock of image '" + image.Path() +
                                          "': " + (image.pool.empty() ? "pool" : "image") + ": missing");
    loop_.Post([image, start, out, owner_seen = std::move(owner_seen), done = std::move(done)] {
      owner_seen();
      LogOutcome(image, start, *out);
      done(out->status);
    });
    return;
  }
  EventLoop& loop = loop_;
  auto on_connected = [&loop, image, start, out, owner_seen = std::move(owner_seen),
                       done = std::move(done)](Result<std::shared_ptr<RadosCluster>> connected) mutable {
    if (!connected.ok()) {
      out->status = connected.status().WithContext("break lock of image " + image.Path());
      owner_seen();
      LogOutcome(image, start, *out);
      done(out->status);
      return;
    }
    std::shared_ptr<RadosCluster> cluster = std::move(connected).value();
    loop.RunBlocking([cluster, image, out] { SeeOwner(cluster, image, *out); },
                     [&loop, cluster, image, start, out, owner_seen = std::move(owner_seen),
                      done = std::move(done)]() mutable {
                       out->owner_seen_ms =
                           std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
                       owner_seen();
                       if (!out->break_needed) {
                         LogOutcome(image, start, *out);
                         done(out->status);
                         return;
                       }
                       // The work drops its cluster reference on the pool thread.
                       loop.RunBlocking([cluster = std::move(cluster), image, out]() mutable {
                         BreakOwner(cluster, image, *out);
                         cluster.reset();
                       },
                                        [image, start, out, done = std::move(done)] {
                                          LogOutcome(image, start, *out);
                                          done(out->status);
                                        });
                     });
  };
  clients_.Get(RadosConfigForImage(image, timeout_s_), std::move(on_connected));
}

}  // namespace nbdk
