// JSON writing: the one set of helpers over rapidjson's writers, for every
// document nbdkeeper writes (journal records, the image-meta stash, /status,
// nbdkeeperctl's output and its volume list). A string is always written
// with its length, so a value is written whole whatever bytes it holds.
// Header only; the includer needs rapidjson's include directory.
#pragma once

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <string_view>
#include <vector>

namespace nbdk {

// Compact JSON into a string buffer. PrettyWriter works with the helpers too.
using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// `value` as a JSON string.
template <typename Writer>
void WriteJsonString(Writer& w, std::string_view value) {
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

// "key": "value".
template <typename Writer>
void WriteJsonMember(Writer& w, const char* key, std::string_view value) {
  w.Key(key);
  WriteJsonString(w, value);
}

// "key": ["value", ...].
template <typename Writer>
void WriteJsonMember(Writer& w, const char* key, const std::vector<std::string>& values) {
  w.Key(key);
  w.StartArray();
  for (const std::string& v : values) WriteJsonString(w, v);
  w.EndArray();
}

// The text written into `buffer`.
inline std::string JsonText(const rapidjson::StringBuffer& buffer) {
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace nbdk
