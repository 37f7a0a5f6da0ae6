#include "csi/rbd_image.h"

#include <rbd/librbd.h>

#include <cerrno>
#include <memory>

namespace nbdk {
namespace {

struct ImageCloser {
  using pointer = rbd_image_t;
  void operator()(rbd_image_t image) const { rbd_close(image); }
};
using Image = std::unique_ptr<void, ImageCloser>;

struct ImageOptionsDeleter {
  using pointer = rbd_image_options_t;
  void operator()(rbd_image_options_t opts) const { rbd_image_options_destroy(opts); }
};

std::string What(IoCtx& io, const char* verb, const std::string& image) {
  return std::string(verb) + " image " + image + " in " + io.description();
}

// Opens `image`; a missing image is NotFound.
Result<Image> Open(IoCtx& io, const std::string& image, bool read_only, const char* verb) {
  rbd_image_t raw = nullptr;
  int rc = read_only ? rbd_open_read_only(io.get(), image.c_str(), &raw, nullptr)
                     : rbd_open(io.get(), image.c_str(), &raw, nullptr);
  rc = io.cluster().NoteResult(rc);
  if (rc == -ENOENT) return Status::NotFound(What(io, verb, image) + ": no such image");
  if (rc < 0) return StatusFromRados(rc, What(io, verb, image));
  return Image(raw);
}

}  // namespace

Status CreateImage(IoCtx& io, const std::string& image, uint64_t size_bytes, uint64_t features) {
  rbd_image_options_t raw = nullptr;
  rbd_image_options_create(&raw);
  std::unique_ptr<void, ImageOptionsDeleter> opts(raw);
  rbd_image_options_set_uint64(raw, RBD_IMAGE_OPTION_FORMAT, 2);
  rbd_image_options_set_uint64(raw, RBD_IMAGE_OPTION_FEATURES, features);
  int rc = io.cluster().NoteResult(rbd_create4(io.get(), image.c_str(), size_bytes, raw));
  if (rc == -EEXIST) return Status::AlreadyExists(What(io, "create", image) + ": exists");
  if (rc < 0) return StatusFromRados(rc, What(io, "create", image));
  return Status::Ok();
}

Result<std::optional<uint64_t>> ImageSize(IoCtx& io, const std::string& image) {
  auto opened = Open(io, image, true, "stat");
  if (!opened.ok() && opened.status().code() == Code::kNotFound) return std::optional<uint64_t>();
  if (!opened.ok()) return opened.status();
  uint64_t size = 0;
  int rc = io.cluster().NoteResult(rbd_get_size(opened->get(), &size));
  if (rc < 0) return StatusFromRados(rc, What(io, "stat", image));
  return std::optional<uint64_t>(size);
}

Result<std::vector<std::string>> ImageWatchers(IoCtx& io, const std::string& image) {
  auto opened = Open(io, image, true, "list watchers of");
  if (!opened.ok()) return opened.status();
  std::vector<rbd_image_watcher_t> watchers(4);
  for (;;) {
    size_t count = watchers.size();
    int rc = io.cluster().NoteResult(rbd_watchers_list(opened->get(), watchers.data(), &count));
    if (rc == -ERANGE) {
      watchers.resize(count);
      continue;
    }
    if (rc < 0) return StatusFromRados(rc, What(io, "list watchers of", image));
    std::vector<std::string> out;
    for (size_t i = 0; i < count; ++i) out.emplace_back(watchers[i].addr ? watchers[i].addr : "?");
    rbd_watchers_list_cleanup(watchers.data(), count);
    return out;
  }
}

Status RemoveImage(IoCtx& io, const std::string& image) {
  int rc = io.cluster().NoteResult(rbd_remove(io.get(), image.c_str()));
  if (rc < 0 && rc != -ENOENT) return StatusFromRados(rc, What(io, "remove", image));
  return Status::Ok();
}

Status GrowImage(IoCtx& io, const std::string& image, uint64_t size_bytes) {
  auto opened = Open(io, image, false, "resize");
  if (!opened.ok()) return opened.status();
  uint64_t size = 0;
  int rc = io.cluster().NoteResult(rbd_get_size(opened->get(), &size));
  if (rc < 0) return StatusFromRados(rc, What(io, "resize", image));
  if (size >= size_bytes) return Status::Ok();
  rc = io.cluster().NoteResult(rbd_resize(opened->get(), size_bytes));
  if (rc < 0) return StatusFromRados(rc, What(io, "resize", image));
  return Status::Ok();
}

}  // namespace nbdk
