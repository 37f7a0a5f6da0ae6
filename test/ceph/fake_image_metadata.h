// FakeImageMetadata: an in-memory ImageMetadata over a set of images whose
// writes can "crash" as FakeOmapStore's do: after `writes_left` successful
// Sets every further Set fails, as if the process died there.
#pragma once

#include <map>
#include <string>

#include "ceph/image_metadata.h"

namespace nbdk {

class FakeImageMetadata final : public ImageMetadata {
 public:
  std::map<std::string, std::map<std::string, std::string>> images;  // image -> its metadata
  int writes_left = -1;                                              // < 0: never crash

  Result<std::optional<std::string>> Get(const std::string& image, const std::string& key) override {
    auto it = images.find(image);
    if (it == images.end()) return Status::NotFound("image " + image + ": no such image");
    auto value = it->second.find(key);
    if (value == it->second.end()) return std::optional<std::string>();
    return std::optional<std::string>(value->second);
  }
  Status Set(const std::string& image, const std::string& key, const std::string& value) override {
    if (writes_left == 0) return Status::IoError("crashed");
    if (writes_left > 0) --writes_left;
    auto it = images.find(image);
    if (it == images.end()) return Status::NotFound("image " + image + ": no such image");
    it->second[key] = value;
    return Status::Ok();
  }
};

}  // namespace nbdk
