#include "ceph/image_metadata.h"

#include "ceph/rbd_image.h"

namespace nbdk {

Result<std::optional<std::string>> RbdImageMetadata::Get(const std::string& image, const std::string& key) {
  return GetImageMetadata(io_, image, key);
}

Status RbdImageMetadata::Set(const std::string& image, const std::string& key, const std::string& value) {
  return SetImageMetadata(io_, image, {{key, value}});
}

}  // namespace nbdk
