// FakeOmapStore: an in-memory OmapStore whose writes can "crash": after
// `writes_left` successful mutations every further mutation fails, as if
// the process died there (nothing after it is written).
#pragma once

#include <map>
#include <string>

#include "ceph/omap_store.h"

namespace nbdk {

class FakeOmapStore final : public OmapStore {
 public:
  std::map<std::string, OmapValues> objects;
  int writes_left = -1;  // < 0: never crash

  Status CreateExclusive(const std::string& object) override {
    NBDK_RETURN_IF_ERROR(Write());
    if (objects.count(object)) return Status::AlreadyExists(object);
    objects[object];
    return Status::Ok();
  }
  Result<OmapValues> Get(const std::string& object, const std::vector<std::string>& keys) override {
    auto it = objects.find(object);
    if (it == objects.end()) return Status::NotFound(object);
    OmapValues out;
    for (const auto& k : keys) {
      if (auto v = it->second.find(k); v != it->second.end()) out.insert(*v);
    }
    return out;
  }
  Result<OmapValues> List(const std::string& object, const std::string& prefix) override {
    auto it = objects.find(object);
    if (it == objects.end()) return Status::NotFound(object);
    OmapValues out;
    for (const auto& [k, v] : it->second) {
      if (k.rfind(prefix, 0) == 0) out.emplace(k, v);
    }
    return out;
  }
  Status Set(const std::string& object, const OmapValues& values) override {
    NBDK_RETURN_IF_ERROR(Write());
    for (const auto& [k, v] : values) objects[object][k] = v;
    return Status::Ok();
  }
  Status RemoveKeys(const std::string& object, const std::vector<std::string>& keys) override {
    NBDK_RETURN_IF_ERROR(Write());
    auto it = objects.find(object);
    if (it == objects.end()) return Status::Ok();
    for (const auto& k : keys) it->second.erase(k);
    return Status::Ok();
  }
  Status RemoveObject(const std::string& object) override {
    NBDK_RETURN_IF_ERROR(Write());
    objects.erase(object);
    return Status::Ok();
  }

 private:
  Status Write() {
    if (writes_left == 0) return Status::IoError("crashed");
    if (writes_left > 0) --writes_left;
    return Status::Ok();
  }
};

}  // namespace nbdk
