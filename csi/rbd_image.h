// The librbd image operations of the Controller service. Every function is
// BLOCKING (run it in EventLoop::RunBlocking); images are opened and closed
// within one call (RAII), errors name the image and its pool.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "daemon/base/status.h"
#include "journal/rados_cluster.h"

namespace nbdk {

// rbd_create4 with `features` (RBD_FEATURE_* bits), format 2. AlreadyExists
// when an image of that name exists.
Status CreateImage(IoCtx& io, const std::string& image, uint64_t size_bytes, uint64_t features);

// The image's size; nullopt when there is no such image.
Result<std::optional<uint64_t>> ImageSize(IoCtx& io, const std::string& image);

// The addresses of the image's watchers (a mapped image has one per
// client); NotFound when there is no such image. Opens the image read-only,
// so this call adds no watcher of its own.
Result<std::vector<std::string>> ImageWatchers(IoCtx& io, const std::string& image);

// rbd_remove; a missing image is success.
Status RemoveImage(IoCtx& io, const std::string& image);

// rbd_resize to `size_bytes`. Never shrinks: a smaller size is success with
// no change. NotFound when there is no such image.
Status GrowImage(IoCtx& io, const std::string& image, uint64_t size_bytes);

}  // namespace nbdk
