#include "supervisor/rbd_lock_breaker.h"

#include <rbd/librbd.h>

#include <cassert>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/log.h"
#include "journal/rados_cluster.h"
#include "supervisor/ceph_address.h"

namespace nbdk {
namespace {

using Clock = std::chrono::steady_clock;

struct RbdImageCloser {
  using pointer = rbd_image_t;
  void operator()(rbd_image_t image) const { rbd_close(image); }
};
using RbdImage = std::unique_ptr<void, RbdImageCloser>;

// What one call found and did; logged as the lock_break event.
struct BreakOutcome {
  Status status;
  std::string owner;       // empty: no owner seen
  int owner_watches = -1;  // watches on the header at the owner's address; -1: unknown
  std::string outcome = "error";
};

// BLOCKING. The exclusive-lock owner's address, or nullopt when unlocked.
Result<std::optional<std::string>> LockOwner(RadosCluster& cluster, rbd_image_t image) {
  std::vector<char*> owners(4, nullptr);
  for (;;) {
    size_t count = owners.size();
    rbd_lock_mode_t mode = RBD_LOCK_MODE_EXCLUSIVE;
    int rc = cluster.NoteResult(rbd_lock_get_owners(image, &mode, owners.data(), &count));
    if (rc == -ENOENT) return std::optional<std::string>();
    if (rc == -ERANGE && count > owners.size()) {
      owners.resize(count, nullptr);
      continue;
    }
    if (rc < 0) return StatusFromRados(rc, "get the exclusive lock owner");
    std::optional<std::string> owner;
    if (count > 0) owner = owners[0];
    rbd_lock_get_owners_cleanup(owners.data(), count);
    return owner;
  }
}

// BLOCKING. How many watches the header object has from `addr`; -1 when
// they cannot be listed (diagnostic only: the dead client's watch is
// expected to be there until the blocklist drops it).
int CountWatchesAt(RadosCluster& cluster, rbd_image_t image, const std::string& addr) {
  std::vector<rbd_image_watcher_t> watchers(8);
  size_t count = watchers.size();
  int rc = cluster.NoteResult(rbd_watchers_list(image, watchers.data(), &count));
  if (rc == -ERANGE) {
    watchers.resize(count);
    rc = cluster.NoteResult(rbd_watchers_list(image, watchers.data(), &count));
  }
  if (rc < 0) return -1;
  int at_addr = 0;
  for (size_t i = 0; i < count; ++i) {
    if (watchers[i].addr != nullptr && addr == watchers[i].addr) ++at_addr;
  }
  rbd_watchers_list_cleanup(watchers.data(), count);
  return at_addr;
}

// BLOCKING. The whole decision and break for one image.
BreakOutcome BreakInWork(std::shared_ptr<RadosCluster> cluster, const ImageSpec& spec) {
  const std::string image_path = spec.Path();
  BreakOutcome out;
  auto fail = [&](Status status) {
    out.status = status.WithContext("break lock of image " + image_path);
    return out;
  };
  Result<std::vector<std::string>> host_ips = HostIpAddresses();
  if (!host_ips.ok()) return fail(host_ips.status());
  Result<IoCtx> io = IoCtx::Open(cluster, spec.pool, spec.rados_namespace);
  if (!io.ok()) return fail(io.status());

  rbd_image_t raw_image = nullptr;
  int rc = cluster->NoteResult(rbd_open(io->get(), spec.image.c_str(), &raw_image, nullptr));
  if (rc < 0) return fail(StatusFromRados(rc, "open image"));
  RbdImage image(raw_image);

  uint64_t features = 0;
  rc = cluster->NoteResult(rbd_get_features(image.get(), &features));
  if (rc < 0) return fail(StatusFromRados(rc, "get image features"));
  if ((features & RBD_FEATURE_EXCLUSIVE_LOCK) == 0) {
    out.outcome = "no_exclusive_lock";
    return out;
  }

  Result<std::optional<std::string>> owner = LockOwner(*cluster, image.get());
  if (!owner.ok()) return fail(owner.status());
  if (!owner->has_value()) {
    out.outcome = "no_owner";
    return out;
  }
  out.owner = **owner;
  out.owner_watches = CountWatchesAt(*cluster, image.get(), out.owner);

  if (!IsLocalAddress(out.owner, *host_ips)) {
    Result<std::vector<std::string>> parsed = CephAddressIps(out.owner);
    std::string why = parsed.ok() ? "is not an address of this host" : parsed.status().message();
    out.outcome = "foreign_owner";
    out.status = Status::FailedPrecondition("image " + image_path + ": exclusive lock owner " + out.owner + " " + why +
                                            "; only a lock of this host's dead rbd-nbd is broken");
    return out;
  }

  rc = cluster->NoteResult(rbd_lock_break(image.get(), RBD_LOCK_MODE_EXCLUSIVE, out.owner.c_str()));
  switch (-rc) {
    case 0:
      out.outcome = "broken";
      return out;
    case ENOENT:  // released (or timed out) between our look and the break
      out.outcome = "no_owner";
      return out;
    case EBUSY:
    case EAGAIN:
      out.outcome = "owner_changed";
      out.status = Status::Aborted("image " + image_path + ": the exclusive lock moved away from " + out.owner +
                                   " while breaking it; nothing was broken");
      return out;
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
                                 {"duration_ms", ms},
                                 {"outcome", out.outcome}});
  } else {
    NBDK_LOG_WARN("lock_break", {{"image", spec.Path()},
                                 {"owner", owner},
                                 {"owner_watches", out.owner_watches},
                                 {"duration_ms", ms},
                                 {"outcome", out.outcome},
                                 {"error", out.status.ToString()}});
  }
}

}  // namespace

RadosConfig RadosConfigForImage(const ImageSpec& image, int timeout_s) {
  RadosConfig config;
  config.ceph_conf = image.ceph_conf;
  config.monitors = image.monitors;
  config.user_id = image.user_id;
  config.keyfile = image.keyfile;
  config.timeout_s = timeout_s;
  return config;
}

RbdLockBreaker::RbdLockBreaker(EventLoop& loop, RadosClients& clients, int timeout_s)
    : loop_(loop), clients_(clients), timeout_s_(timeout_s) {}

void RbdLockBreaker::BreakDeadOwnerLock(const ImageSpec& image, std::function<void(Status)> done) {
  assert(loop_.IsLoopThread());
  const Clock::time_point start = Clock::now();
  if (image.pool.empty() || image.image.empty()) {
    BreakOutcome out;
    out.status = Status::InvalidArgument("break lock of image '" + image.Path() +
                                         "': " + (image.pool.empty() ? "pool" : "image") + ": missing");
    LogOutcome(image, start, out);
    loop_.Post([done = std::move(done), status = out.status] { done(status); });
    return;
  }
  EventLoop& loop = loop_;
  auto on_connected = [&loop, image, start, done = std::move(done)](Result<std::shared_ptr<RadosCluster>> cluster) {
    if (!cluster.ok()) {
      BreakOutcome out;
      out.status = cluster.status().WithContext("break lock of image " + image.Path());
      LogOutcome(image, start, out);
      done(out.status);
      return;
    }
    auto out = std::make_shared<BreakOutcome>();
    // The work drops its cluster reference on the pool thread.
    auto work = [cluster = std::move(cluster).value(), image, out]() mutable {
      *out = BreakInWork(std::move(cluster), image);
    };
    loop.RunBlocking(std::move(work), [image, start, out, done] {
      LogOutcome(image, start, *out);
      done(out->status);
    });
  };
  clients_.Get(RadosConfigForImage(image, timeout_s_), std::move(on_connected));
}

}  // namespace nbdk
