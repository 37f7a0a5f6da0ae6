#include "ceph/image_spec.h"

#include "base/quote_field.h"
#include "base/text_rules.h"

namespace nbdk {

bool SplitImagePath(std::string_view path, ImageSpec* image) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    size_t slash = path.find('/', start);
    parts.push_back(path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos || parts.size() > 3) break;
    start = slash + 1;
  }
  if (parts.size() != 2 && parts.size() != 3) return false;
  image->pool = parts.front();
  image->rados_namespace = parts.size() == 3 ? parts[1] : "";
  image->image = parts.back();
  return true;
}

bool SplitImageSpec(std::string_view spec, ImageSpec* image) {
  size_t at = spec.find('@');
  std::string_view snap = at == std::string_view::npos ? std::string_view() : spec.substr(at + 1);
  if (at != std::string_view::npos && snap.empty()) return false;
  ImageSpec read;
  if (!SplitImagePath(spec.substr(0, at), &read)) return false;
  image->pool = std::move(read.pool);
  image->rados_namespace = std::move(read.rados_namespace);
  image->image = std::move(read.image);
  image->snap = snap;
  return true;
}

Status CheckCephName(std::string_view field, std::string_view value, bool required) {
  std::string f(field);
  if (value.empty()) return required ? Status::InvalidArgument(f + ": missing") : Status::Ok();
  if (value.size() > 255) return Status::InvalidArgument(f + ": longer than 255 bytes");
  if (HasSpaceOrControl(value)) return Status::InvalidArgument(f + ": contains whitespace or a control character");
  std::string shown = f + ": " + QuoteField(value) + " ";
  if (value.find_first_of("/@") != std::string_view::npos)
    return Status::InvalidArgument(shown + "contains '/' or '@'");
  if (value.front() == '-') return Status::InvalidArgument(shown + "starts with '-'");
  if (value == "." || value == "..") return Status::InvalidArgument(shown + "is not a name");
  return Status::Ok();
}

}  // namespace nbdk
