#include "ceph/rbd_image.h"

#include <rbd/librbd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <memory>

namespace nbdk {

std::string ImageWhat(IoCtx& io, const char* verb, const std::string& image) {
  return std::string(verb) + " image " + image + " in " + io.description();
}

Result<RbdImage> OpenImage(IoCtx& io, const std::string& image, bool read_only, const char* verb, bool by_id) {
  rbd_image_t raw = nullptr;
  int rc = 0;
  if (by_id) {
    rc = read_only ? rbd_open_by_id_read_only(io.get(), image.c_str(), &raw, nullptr)
                   : rbd_open_by_id(io.get(), image.c_str(), &raw, nullptr);
  } else {
    rc = read_only ? rbd_open_read_only(io.get(), image.c_str(), &raw, nullptr)
                   : rbd_open(io.get(), image.c_str(), &raw, nullptr);
  }
  rc = io.cluster().NoteResult(rc);
  if (rc == -ENOENT) return Status::NotFound(ImageWhat(io, verb, image) + ": no such image");
  if (rc < 0) return StatusFromRados(rc, ImageWhat(io, verb, image));
  return RbdImage(raw);
}

RbdImageOptions ToRbdImageOptions(const ImageCreateOptions& options) {
  rbd_image_options_t raw = nullptr;
  rbd_image_options_create(&raw);
  RbdImageOptions opts(raw);
  rbd_image_options_set_uint64(raw, RBD_IMAGE_OPTION_FORMAT, 2);
  rbd_image_options_set_uint64(raw, RBD_IMAGE_OPTION_FEATURES, options.features);
  if (!options.data_pool.empty()) {
    rbd_image_options_set_string(raw, RBD_IMAGE_OPTION_DATA_POOL, options.data_pool.c_str());
  }
  if (options.object_size != 0) {
    rbd_image_options_set_uint64(raw, RBD_IMAGE_OPTION_ORDER, std::countr_zero(options.object_size));
  }
  if (options.stripe_unit != 0) rbd_image_options_set_uint64(raw, RBD_IMAGE_OPTION_STRIPE_UNIT, options.stripe_unit);
  if (options.stripe_count != 0) {
    rbd_image_options_set_uint64(raw, RBD_IMAGE_OPTION_STRIPE_COUNT, options.stripe_count);
  }
  return opts;
}

Status ImageCreateFailure(IoCtx& io, const char* verb, const std::string& image, uint64_t features, int rc) {
  if (rc != -ENOSYS && rc != -EOPNOTSUPP) return StatusFromRados(rc, ImageWhat(io, verb, image));
  std::string names(256, '\0');
  size_t size = names.size();
  if (rbd_features_to_string(features, names.data(), &size) < 0) size = 0;
  names.resize(std::strlen(names.c_str()));
  return Status::InvalidArgument(ImageWhat(io, verb, image) + ": " +
                                 (rc == -ENOSYS ? "this librbd does not support" : "the cluster does not support") +
                                 " an image with features " + (names.empty() ? std::to_string(features) : names) +
                                 " (" + std::strerror(-rc) + ")");
}

Status CreateImage(IoCtx& io, const std::string& image, uint64_t size_bytes, const ImageCreateOptions& options) {
  RbdImageOptions opts = ToRbdImageOptions(options);
  int rc = io.cluster().NoteResult(rbd_create4(io.get(), image.c_str(), size_bytes, opts.get()));
  if (rc == -EEXIST) return Status::AlreadyExists(ImageWhat(io, "create", image) + ": exists");
  if (rc < 0) return ImageCreateFailure(io, "create", image, options.features, rc);
  return Status::Ok();
}

Status SetImageMetadata(IoCtx& io, const std::string& image, const std::map<std::string, std::string>& metadata) {
  if (metadata.empty()) return Status::Ok();
  auto opened = OpenImage(io, image, false, "set metadata of");
  if (!opened.ok()) return opened.status();
  for (const auto& [key, value] : metadata) {
    int rc = io.cluster().NoteResult(rbd_metadata_set(opened->get(), key.c_str(), value.c_str()));
    if (rc < 0) return StatusFromRados(rc, ImageWhat(io, "set metadata of", image) + ": key " + key);
  }
  return Status::Ok();
}

Result<std::optional<std::string>> GetImageMetadata(IoCtx& io, const std::string& image, const std::string& key) {
  auto opened = OpenImage(io, image, true, "read metadata of");
  if (!opened.ok()) return opened.status();
  std::string value(64, '\0');
  for (;;) {
    size_t size = value.size();
    int rc = io.cluster().NoteResult(rbd_metadata_get(opened->get(), key.c_str(), value.data(), &size));
    if (rc == -ENOENT) return std::optional<std::string>();
    // librbd says how large the value (with its NUL) is.
    if (rc == -ERANGE && size > value.size()) {
      value.resize(size);
      continue;
    }
    if (rc < 0) return StatusFromRados(rc, ImageWhat(io, "read metadata of", image) + ": key " + key);
    // A success need not update `size`; the value ends at its NUL.
    value.resize(::strnlen(value.data(), value.size()));
    return std::optional<std::string>(std::move(value));
  }
}

Result<std::optional<uint64_t>> ImageSize(IoCtx& io, const std::string& image) {
  auto opened = OpenImage(io, image, true, "stat");
  if (!opened.ok() && opened.status().code() == Code::kNotFound) return std::optional<uint64_t>();
  if (!opened.ok()) return opened.status();
  uint64_t size = 0;
  int rc = io.cluster().NoteResult(rbd_get_size(opened->get(), &size));
  if (rc < 0) return StatusFromRados(rc, ImageWhat(io, "stat", image));
  return std::optional<uint64_t>(size);
}

Result<std::vector<CephClient>> ImageWatchers(IoCtx& io, const std::string& image) {
  auto opened = OpenImage(io, image, true, "list watchers of");
  if (!opened.ok()) return opened.status();
  return ImageWatchers(io, opened->get(), image);
}

Result<std::vector<CephClient>> ImageWatchers(IoCtx& io, rbd_image_t opened, const std::string& image) {
  std::vector<rbd_image_watcher_t> watchers(4);
  for (;;) {
    size_t count = watchers.size();
    int rc = io.cluster().NoteResult(rbd_watchers_list(opened, watchers.data(), &count));
    if (rc == -ERANGE) {
      watchers.resize(count);
      continue;
    }
    if (rc < 0) return StatusFromRados(rc, ImageWhat(io, "list watchers of", image));
    std::vector<CephClient> out;
    for (size_t i = 0; i < count; ++i) {
      out.push_back(
          {"client." + std::to_string(watchers[i].id), watchers[i].addr ? LegacyCephAddress(watchers[i].addr) : "?"});
    }
    rbd_watchers_list_cleanup(watchers.data(), count);
    return out;
  }
}

Status GrowImage(IoCtx& io, const std::string& image, uint64_t size_bytes) {
  auto opened = OpenImage(io, image, false, "resize");
  if (!opened.ok()) return opened.status();
  uint64_t size = 0;
  int rc = io.cluster().NoteResult(rbd_get_size(opened->get(), &size));
  if (rc < 0) return StatusFromRados(rc, ImageWhat(io, "resize", image));
  if (size >= size_bytes) return Status::Ok();
  rc = io.cluster().NoteResult(rbd_resize(opened->get(), size_bytes));
  if (rc < 0) return StatusFromRados(rc, ImageWhat(io, "resize", image));
  return Status::Ok();
}

}  // namespace nbdk
