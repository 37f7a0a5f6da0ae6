// Helpers of the Controller VM tests: what is in RADOS and RBD, read
// directly (not through nbdkeeperd) to check what the controller wrote.
#pragma once

#include <rados/librados.h>
#include <rbd/librbd.h>
#include <sys/statvfs.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ceph/rados_cluster.h"

namespace nbdk::vmtest {

inline constexpr int64_t kMiB = 1 << 20;

// Every omap key of `object`; nullopt when the object is missing.
inline std::optional<std::map<std::string, std::string>> AllOmap(IoCtx& io, const std::string& object) {
  ReadOp op(rados_create_read_op());
  rados_omap_iter_t raw_iter = nullptr;
  unsigned char more = 0;
  int rval = 0;
  rados_read_op_omap_get_vals2(op.get(), "", "", 1000, &raw_iter, &more, &rval);
  OmapIter iter(raw_iter);
  int rc = rados_read_op_operate(op.get(), io.get(), object.c_str(), 0);
  std::optional<std::map<std::string, std::string>> out;
  if (rc == 0 && rval == 0) {
    out.emplace();
    for (;;) {
      char *k = nullptr, *v = nullptr;
      size_t kl = 0, vl = 0;
      if (rados_omap_get_next2(iter.get(), &k, &v, &kl, &vl) < 0 || k == nullptr) break;
      (*out)[std::string(k, kl)] = std::string(v, vl);
    }
  }
  return out;
}

// The size of the filesystem mounted at `path`; -1 when unread.
inline int64_t FilesystemBytes(const std::string& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0) return -1;
  return static_cast<int64_t>(st.f_blocks) * static_cast<int64_t>(st.f_frsize);
}

inline bool ImageExists(IoCtx& io, const std::string& image) {
  rbd_image_t img = nullptr;
  int rc = rbd_open_read_only(io.get(), image.c_str(), &img, nullptr);
  if (rc == 0) rbd_close(img);
  return rc == 0;
}

// `bytes` of `image` from `offset`; "" when the image cannot be read.
inline std::string ReadImage(IoCtx& io, const std::string& image, int64_t offset, int64_t bytes) {
  rbd_image_t img = nullptr;
  if (rbd_open_read_only(io.get(), image.c_str(), &img, nullptr) != 0) return "";
  std::string out(bytes, '\0');
  ssize_t n = rbd_read(img, offset, bytes, out.data());
  rbd_close(img);
  return n == bytes ? out : "";
}

inline bool WriteImage(IoCtx& io, const std::string& image, int64_t offset, const std::string& data) {
  rbd_image_t img = nullptr;
  if (rbd_open(io.get(), image.c_str(), &img, nullptr) != 0) return false;
  bool ok = rbd_write(img, offset, data.size(), data.data()) == static_cast<ssize_t>(data.size());
  rbd_close(img);
  return ok;
}

// Names of the pool's images in the RBD trash.
inline std::set<std::string> Trash(IoCtx& io) {
  std::vector<rbd_trash_image_info_t> entries(64);
  size_t n = entries.size();
  std::set<std::string> out;
  if (rbd_trash_list(io.get(), entries.data(), &n) < 0) return out;
  for (size_t i = 0; i < n; ++i) out.insert(entries[i].name);
  rbd_trash_list_cleanup(entries.data(), n);
  return out;
}

}  // namespace nbdk::vmtest
