#include "base/json_writer.h"

#include <gtest/gtest.h>
#include <rapidjson/prettywriter.h>

#include <string>
#include <vector>

namespace nbdk {
namespace {

TEST(JsonWriterTest, MembersAreWrittenWhole) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  WriteJsonMember(w, "s", std::string("a\"b\0c", 5));
  WriteJsonMember(w, "list", std::vector<std::string>{"x", ""});
  WriteJsonMember(w, "empty", std::vector<std::string>{});
  w.Key("one");
  WriteJsonString(w, "v");
  w.EndObject();
  EXPECT_EQ(JsonText(buf), R"({"s":"a\"b\u0000c","list":["x",""],"empty":[],"one":"v"})");
}

TEST(JsonWriterTest, WorksWithThePrettyWriter) {
  rapidjson::StringBuffer buf;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  WriteJsonMember(w, "k", "v");
  w.EndObject();
  EXPECT_EQ(JsonText(buf), "{\n    \"k\": \"v\"\n}");
}

}  // namespace
}  // namespace nbdk
