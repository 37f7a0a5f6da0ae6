// librbd image handles (RbdImage) and the image operations of the Controller,
// the Node's expansion and the lock breaker. Every function is
// BLOCKING (run it in EventLoop::RunBlocking); images are opened and closed
// within one call (RAII), errors name the image and its pool.
#pragma once

#include <rbd/librbd.h>

#include <cstdint>
#include <map>
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
Result<RbdImage> OpenImage(IoCtx& io, const std::string& image, bool read_only, const char* verb, bool by_id = false);

// How CreateImage lays an image out. `features` is always set (0: none);
// any other field left 0 or empty is librbd's default (the client's
// rbd_default_* settings). librbd adds the data-pool and striping-v2
// features itself when a data pool or a non-default striping asks for them.
struct ImageCreateOptions {
  uint64_t features = 0;      // RBD_FEATURE_* bits
  std::string data_pool;      // where the data objects go; the image pool keeps the header
  uint64_t object_size = 0;   // bytes, a power of two (librbd takes its log2, the order)
  uint64_t stripe_unit = 0;   // bytes; with stripe_count, librbd's "fancy" striping
  uint64_t stripe_count = 0;  // objects a stripe spans

  bool operator==(const ImageCreateOptions&) const = default;
};

struct RbdImageOptionsDeleter {
  using pointer = rbd_image_options_t;
  void operator()(rbd_image_options_t opts) const { rbd_image_options_destroy(opts); }
};
using RbdImageOptions = std::unique_ptr<void, RbdImageOptionsDeleter>;

// librbd's image options for `options`, format 2: what CreateImage and
// CloneImage (ceph/rbd_clone.h) pass.
RbdImageOptions ToRbdImageOptions(const ImageCreateOptions& options);

// The status of an rbd_create4 or rbd_clone3 that failed with `rc`: librbd's
// ENOSYS (a feature this librbd does not know) and EOPNOTSUPP (one the
// cluster's OSDs cannot do) are InvalidArgument naming the features asked for.
Status ImageCreateFailure(IoCtx& io, const char* verb, const std::string& image, uint64_t features, int rc);

// rbd_create4 with `options`, format 2. AlreadyExists when an image of that
// name exists. A layout librbd refuses is its EINVAL: callers check theirs;
// features it or the cluster cannot make are ImageCreateFailure's.
Status CreateImage(IoCtx& io, const std::string& image, uint64_t size_bytes, const ImageCreateOptions& options);

// rbd_metadata_set of each key: the image's `rbd image-meta` entries,
// overwritten when present. NotFound when there is no such image.
Status SetImageMetadata(IoCtx& io, const std::string& image, const std::map<std::string, std::string>& metadata);

// rbd_metadata_get of `key`: the value, or nullopt when the image has no
// such key. NotFound when there is no such image.
Result<std::optional<std::string>> GetImageMetadata(IoCtx& io, const std::string& image, const std::string& key);

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
