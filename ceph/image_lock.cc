#include "ceph/image_lock.h"

#include <rados/librados.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "ceph/rbd_image.h"

namespace nbdk {
namespace {

// BLOCKING. The image's id from its rbd_id.<name> object (an encoded
// string: 32-bit little-endian length, then the bytes). NotFound when the
// object is missing: no such image, or an old format-1 image, which has no
// exclusive lock.
Result<std::string> ImageId(RadosCluster& cluster, IoCtx& io, const std::string& image) {
  char buf[128];
  int rc = cluster.NoteResult(rados_read(io.get(), ("rbd_id." + image).c_str(), buf, sizeof(buf), 0));
  if (rc < 0) return StatusFromRados(rc, "read the id of image " + image);
  uint32_t len = 0;
  if (rc >= 4) std::memcpy(&len, buf, 4);
  if (rc < 4 || len == 0 || len > static_cast<uint32_t>(rc) - 4) {
    return Status::Corruption("rbd_id." + image + ": not an encoded image id (" + std::to_string(rc) + " bytes)");
  }
  return std::string(buf + 4, len);
}

}  // namespace

Result<std::optional<CephClient>> ExclusiveLockOwner(RadosCluster& cluster, IoCtx& io, const std::string& image) {
  Result<std::string> id = ImageId(cluster, io, image);
  if (!id.ok() && id.status().code() == Code::kNotFound) {
    // rbd_id is gone: either no such image (say so) or a format-1 image.
    Result<RbdImage> opened = OpenImage(io, image, true, "open");
    if (!opened.ok()) return opened.status();
    return std::optional<CephClient>();
  }
  if (!id.ok()) return id.status();
  const std::string header = "rbd_header." + *id;
  std::vector<char> tag(64), clients(256), cookies(256), addrs(256);
  for (;;) {
    int exclusive = 0;
    size_t tag_len = tag.size(), clients_len = clients.size(), cookies_len = cookies.size(), addrs_len = addrs.size();
    ssize_t n =
        rados_list_lockers(io.get(), header.c_str(), "rbd_lock", &exclusive, tag.data(), &tag_len, clients.data(),
                           &clients_len, cookies.data(), &cookies_len, addrs.data(), &addrs_len);
    cluster.NoteResult(n < 0 ? static_cast<int>(n) : 0);
    if (n == -ERANGE) {
      tag.resize(std::max(tag_len, tag.size() * 2));
      clients.resize(std::max(clients_len, clients.size() * 2));
      cookies.resize(std::max(cookies_len, cookies.size() * 2));
      addrs.resize(std::max(addrs_len, addrs.size() * 2));
      continue;
    }
    if (n == -ENOENT || n == 0) return std::optional<CephClient>();
    if (n < 0) return StatusFromRados(static_cast<int>(n), "list the lockers of " + header);
    // Entities and addresses are NUL-separated; an exclusive lock has one
    // locker. librbd names an owner by its legacy address; RADOS's lock
    // listing may print the typed form ("v1:127.0.0.1:0/123").
    return std::optional<CephClient>(CephClient{clients.data(), LegacyCephAddress(addrs.data())});
  }
}

Result<ImageClients> ListImageClients(RadosCluster& cluster, IoCtx& io, const std::string& image) {
  ImageClients seen;
  Result<std::optional<CephClient>> owner = ExclusiveLockOwner(cluster, io, image);
  if (!owner.ok()) return owner.status();
  seen.lock_owner = std::move(owner).value();
  Result<RbdImage> opened = OpenImage(io, image, true, "list the clients of");
  if (!opened.ok()) return opened.status();
  uint64_t features = 0;
  int rc = cluster.NoteResult(rbd_get_features(opened->get(), &features));
  if (rc < 0) return StatusFromRados(rc, ImageWhat(io, "read the features of", image));
  seen.exclusive_lock = (features & RBD_FEATURE_EXCLUSIVE_LOCK) != 0;
  Result<std::vector<CephClient>> watchers = ImageWatchers(io, opened->get(), image);
  if (!watchers.ok()) return watchers.status();
  seen.watchers = std::move(watchers).value();
  Result<std::vector<std::string>> host_ips = HostIpAddresses();
  if (!host_ips.ok()) return host_ips.status();
  std::vector<CephClient> all = seen.watchers;
  if (seen.lock_owner) all.push_back(*seen.lock_owner);
  for (const CephClient& c : all) {
    if (IsLocalAddress(c.addr, *host_ips)) seen.local.push_back(c);
  }
  return seen;
}

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

int BreakExclusiveLock(RadosCluster& cluster, rbd_image_t image, const std::string& owner) {
  return cluster.NoteResult(rbd_lock_break(image, RBD_LOCK_MODE_EXCLUSIVE, owner.c_str()));
}

}  // namespace nbdk
