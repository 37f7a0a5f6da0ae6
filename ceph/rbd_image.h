// librbd image handles (RbdImage) and the image operations of the Controller,
// the Node's expansion and the lock breaker. Every function is
// BLOCKING (run it in EventLoop::RunBlocking); images are opened and closed
// within one call (RAII), errors name the image and its pool.
#pragma once

#include <rbd/librbd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "ceph/ceph_address.h"
#include "ceph/rados_cluster.h"

namespace nbdk {

struct RbdImageCloser {
  using pointer = rbd_image_t;
  void operator()(rbd_image_t image) const { rbd_close(image); }
};
// An open librbd image; closed (BLOCKING) when destroyed.
using RbdImage = std::unique_ptr<void, RbdImageCloser>;

// "<verb> image <image> in pool ...": the context of every error.
std::string ImageWhat(IoCtx& io, const char* verb, const std::string& image);

// Opens `image` by name (or, with `by_id`, by its RBD image id, which also
// opens an image in the trash). NotFound when there is no such image.
Result<RbdImage> OpenImage(IoCtx& io, const std::string& image, bool read_only, const char* verb,
                           bool by_id = false);

// rbd_create4 with `features` (RBD_FEATURE_* bits), format 2. AlreadyExists
// when an image of that name exists.
Status CreateImage(IoCtx& io, const std::string& image, uint64_t size_bytes, uint64_t features);

// The image's size; nullopt when there is no such image.
Result<std::optional<uint64_t>> ImageSize(IoCtx& io, const std::string& image);

// The image's watchers (a mapped image has one per client); NotFound when
// there is no such image. Opens the image read-only, so this call adds no
// watcher of its own.
Result<std::vector<CephClient>> ImageWatchers(IoCtx& io, const std::string& image);
// The same for an image already open (`image` names it in errors).
Result<std::vector<CephClient>> ImageWatchers(IoCtx& io, rbd_image_t opened, const std::string& image);

// rbd_resize to `size_bytes`. Never shrinks: a smaller size is success with
// no change. NotFound when there is no such image.
Status GrowImage(IoCtx& io, const std::string& image, uint64_t size_bytes);

}  // namespace nbdk
