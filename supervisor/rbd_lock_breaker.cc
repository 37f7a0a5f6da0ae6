#include "supervisor/rbd_lock_breaker.h"

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/log.h"
#include "ceph/ceph_address.h"
#include "ceph/image_lock.h"
#include "ceph/rados_cluster.h"
#include "ceph/rbd_image.h"

namespace nbdk {
namespace {

using Clock = std::chrono::steady_clock;

// What one break found and did; logged as the lock_break event.
struct BreakOutcome {
  int owner_watches = -1;  // watches on the header at the owner's address; -1: unknown
  std::string outcome = "error";
};

// BLOCKING. Breaks `owner`'s lock, and only that owner's: librbd re-reads
// the lock and refuses (EBUSY) when it moved.
Status BreakOwner(const std::shared_ptr<RadosCluster>& cluster, const ImageSpec& spec, const CephClient& owner,
                  BreakOutcome& out) {
  Result<std::vector<std::string>> host_ips = HostIpAddresses();
  if (!host_ips.ok()) return host_ips.status();
  if (!IsLocalAddress(owner.addr, *host_ips)) {
    out.outcome = "foreign_owner";
    return Status::FailedPrecondition("exclusive lock owner " + owner.ToString() +
                                      " is not on this host; only a lock of this host's dead rbd-nbd is broken");
  }
  Result<IoCtx> io = IoCtx::Open(cluster, spec.pool, spec.rados_namespace);
  if (!io.ok()) return io.status();
  Result<RbdImage> image = OpenImage(*io, spec.image, false, "open");
  if (!image.ok()) return image.status();
  out.owner_watches = CountWatchesAt(*cluster, image->get(), owner.addr);
  int rc = BreakExclusiveLock(*cluster, image->get(), owner.addr);
  switch (-rc) {
    case 0:
      out.outcome = "broken";
      return Status::Ok();
    case ENOENT:  // released (or timed out) between our look and the break
      out.outcome = "no_owner";
      return Status::Ok();
    case EBUSY:
    case EAGAIN:
      out.outcome = "owner_changed";
      return Status::Aborted("the exclusive lock moved away from " + owner.ToString() +
                             " while breaking it; nothing was broken");
    case EACCES:
    case EPERM:
      return Status::FailedPrecondition("blocklist lock owner " + owner.ToString() +
                                        ": permission denied (the cephx user needs mon caps 'profile rbd')");
    default:
      return StatusFromRados(rc, "break the exclusive lock of " + owner.ToString());
  }
}

}  // namespace

RbdLockBreaker::RbdLockBreaker(EventLoop& loop, RadosClients& clients, int timeout_s)
    : loop_(loop), clients_(clients), timeout_s_(timeout_s) {}

template <typename T>
void RbdLockBreaker::OnCluster(const ImageSpec& image, const char* what,
                               std::function<Result<T>(const std::shared_ptr<RadosCluster>&)> work,
                               std::function<void(Result<T>)> done) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  std::string context = std::string(what) + " of image " + image.Path();
  if (image.pool.empty() || image.image.empty()) {
    Status bad = Status::InvalidArgument(context + ": " + (image.pool.empty() ? "pool" : "image") + ": missing");
    loop_.Post([bad, done = std::move(done)] { done(bad); });
    return;
  }
  EventLoop& loop = loop_;
  clients_.Get(RadosConfigForImage(image, timeout_s_), [&loop, context, work = std::move(work), done = std::move(done)](
                                                           Result<std::shared_ptr<RadosCluster>> connected) mutable {
    if (!connected.ok()) return done(connected.status().WithContext(context));
    auto result = std::make_shared<Result<T>>(Status::Ok());
    loop.RunBlocking(
        [cluster = std::move(connected).value(), work = std::move(work), result]() mutable {
          *result = work(cluster);
          cluster.reset();
        },
        [context, result, done = std::move(done)] {
          done(result->ok() ? std::move(*result) : Result<T>(result->status().WithContext(context)));
        });
  });
}

void RbdLockBreaker::ListClients(const ImageSpec& image, std::function<void(Result<ImageClients>)> done) {
  OnCluster<ImageClients>(
      image, "list the clients",
      [image](const std::shared_ptr<RadosCluster>& cluster) -> Result<ImageClients> {
        Result<IoCtx> io = IoCtx::Open(cluster, image.pool, image.rados_namespace);
        if (!io.ok()) return io.status();
        return ListImageClients(*cluster, *io, image.image);
      },
      std::move(done));
}

void RbdLockBreaker::BreakLock(const ImageSpec& image, const CephClient& owner, std::function<void(Status)> done) {
  const Clock::time_point start = Clock::now();
  auto out = std::make_shared<BreakOutcome>();
  OnCluster<bool>(
      image, "break the lock",
      [image, owner, out](const std::shared_ptr<RadosCluster>& cluster) -> Result<bool> {
        Status s = BreakOwner(cluster, image, owner, *out);
        if (!s.ok()) return s;
        return true;
      },
      [image, owner, start, out, done = std::move(done)](Result<bool> r) {
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
        Log(r.ok() ? LogLevel::kInfo : LogLevel::kWarn, "lock_break",
            {{"image", image.Path()},
             {"owner", owner.ToString()},
             {"owner_watches", out->owner_watches},
             {"duration_ms", ms},
             {"outcome", out->outcome},
             {"error", r.ok() ? "-" : r.status().ToString()}});
        done(r.status());
      });
}

}  // namespace nbdk
