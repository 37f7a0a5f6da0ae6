// How ceph-csi's Go code reads a JSON object into a struct (encoding/json),
// for the files nbdkeeper shares with it: config.json and StorageClass
// parameters holding JSON. One rule, so that every reader agrees with Go.
#pragma once

#include <rapidjson/document.h>
#include <strings.h>

#include <string_view>

namespace nbdk {

// The member for struct field `name`: the key of exactly that name, else
// the first that matches it ignoring case; a null value counts as absent.
inline const rapidjson::Value* GoField(const rapidjson::Value& object, const char* name) {
  const rapidjson::Value* folded = nullptr;
  for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it) {
    const char* key = it->name.GetString();
    if (std::string_view(key, it->name.GetStringLength()) == name) {
      return it->value.IsNull() ? nullptr : &it->value;
    }
    if (folded == nullptr && ::strcasecmp(key, name) == 0 && !it->value.IsNull()) folded = &it->value;
  }
  return folded;
}

}  // namespace nbdk
