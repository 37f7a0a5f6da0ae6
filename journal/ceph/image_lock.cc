#include "journal/ceph/image_lock.h"

#include <rados/librados.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "journal/ceph/rbd_image.h"

namespace nbdk {
namespace {

// librbd names an owner by its legacy address ("127.0.0.1:0/123"); RADOS's
// lock listing may print the typed form ("v1:127.0.0.1:0/123").
std::string LegacyAddress(std::string addr) {
  for (std::string_view prefix : {"v1:", "v2:", "any:"}) {
    if (addr.rfind(prefix, 0) == 0) return addr.substr(prefix.size());
  }
  return addr;
}

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

Result<std::optional<std::string>> ExclusiveLockOwner(RadosCluster& cluster, IoCtx& io, const std::string& image) {
  Result<std::string> id = ImageId(cluster, io, image);
  if (!id.ok() && id.status().code() == Code::kNotFound) {
    // rbd_id is gone: either no such image (say so) or a format-1 image.
    Result<RbdImage> opened = OpenImage(io, image, true, "open");
    if (!opened.ok()) return opened.status();
    return std::optional<std::string>();
  }
  if (!id.ok()) return id.status();
  const std::string header = "rbd_header." + *id;
  std::vector<char> tag(64), clients(256), cookies(256), addrs(256);
  for (;;) {
    int exclusive = 0;
    size_t tag_len = tag.size(), clients_len = clients.size(), cookies_len = cookies.size(),
           addrs_len = addrs.size();
    ssize_t n = rados_list_lockers(io.get(), header.c_str(), "rbd_lock", &exclusive, tag.data(), &tag_len,
                                   clients.data(), &clients_len, cookies.data(), &cookies_len, addrs.data(),
                                   &addrs_len);
    cluster.NoteResult(n < 0 ? static_cast<int>(n) : 0);
    if (n == -ERANGE) {
      tag.resize(std::max(tag_len, tag.size() * 2));
      clients.resize(std::max(clients_len, clients.size() * 2));
      cookies.resize(std::max(cookies_len, cookies.size() * 2));
      addrs.resize(std::max(addrs_len, addrs.size() * 2));
      continue;
    }
    if (n == -ENOENT || n == 0) return std::optional<std::string>();
    if (n < 0) return StatusFromRados(static_cast<int>(n), "list the lockers of " + header);
    // Addresses are NUL-separated; an exclusive lock has one locker.
    return std::optional<std::string>(LegacyAddress(std::string(addrs.data())));
  }
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
