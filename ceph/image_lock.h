// Who uses an RBD image, as RADOS and librbd keep it: the clients watching
// its header, the holder of its exclusive lock, and breaking that lock. The
// policies of who may map an image and whose lock may be broken are the
// supervisor's (supervisor/image_fence.h, supervisor/rbd_lock_breaker.h).
// Every function is BLOCKING (run it in EventLoop::RunBlocking).
#pragma once

#include <rbd/librbd.h>

#include <optional>
#include <string>

#include "base/status.h"
#include "ceph/ceph_address.h"
#include "ceph/image_clients.h"
#include "ceph/rados_cluster.h"

namespace nbdk {

// Whoever holds `image`'s exclusive lock (its address in librbd's legacy
// form, "127.0.0.1:0/123"), read from the RADOS lock "rbd_lock" on its
// header object: one round trip after the image's id, no image open.
// nullopt when unlocked or when the image (format 1) has no header lock;
// NotFound when there is no such image.
Result<std::optional<CephClient>> ExclusiveLockOwner(RadosCluster& cluster, IoCtx& io, const std::string& image);

// NotFound when there is no such image. Adds no watcher of its own. The
// local clients are those at one of HostIpAddresses().
Result<ImageClients> ListImageClients(RadosCluster& cluster, IoCtx& io, const std::string& image);

// How many watches the open image's header has from `addr`; -1 when they
// cannot be listed (a diagnostic: a dead client's watch stays until the
// blocklist drops it).
int CountWatchesAt(RadosCluster& cluster, rbd_image_t image, const std::string& addr);

// rbd_lock_break of `owner`'s exclusive lock, which blocklists `owner`
// first. librbd re-reads the lock and refuses with -EBUSY or -EAGAIN when it
// moved to someone else. Returns librbd's result (0 or -errno), noted on
// the cluster's health.
int BreakExclusiveLock(RadosCluster& cluster, rbd_image_t image, const std::string& owner);

}  // namespace nbdk
