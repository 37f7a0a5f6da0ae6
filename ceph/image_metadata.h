// ImageMetadata: the `rbd image-meta` keys of the images of one pool,
// behind an interface, so that what the Controller keeps there (ceph-csi's
// encryption state and wrapped key) is tested against an in-memory fake
// (test/ceph/fake_image_metadata.h) and runs on librbd (RbdImageMetadata)
// in the daemon.
//
// Every RbdImageMetadata call is BLOCKING: run it in EventLoop::RunBlocking.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "ceph/rados_cluster.h"

namespace nbdk {

class ImageMetadata {
 public:
  virtual ~ImageMetadata() = default;
  // The value of `key`; nullopt when the image has no such key. NotFound
  // when there is no such image.
  virtual Result<std::optional<std::string>> Get(const std::string& image, const std::string& key) = 0;
  // Sets `key` to `value`, overwriting it. NotFound when there is no such
  // image.
  virtual Status Set(const std::string& image, const std::string& key, const std::string& value) = 0;
};

class RbdImageMetadata final : public ImageMetadata {
 public:
  explicit RbdImageMetadata(IoCtx& io) : io_(io) {}  // `io` outlives it

  Result<std::optional<std::string>> Get(const std::string& image, const std::string& key) override;
  Status Set(const std::string& image, const std::string& key, const std::string& value) override;

 private:
  IoCtx& io_;
};

}  // namespace nbdk
