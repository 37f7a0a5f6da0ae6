#include "encryption/base64.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nbdk {
namespace {

std::span<const uint8_t> Span(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

TEST(Base64Test, EncodesRfc4648VectorsWithPadding) {
  const std::vector<std::pair<std::string, std::string>> vectors = {{"", ""},
                                                                    {"f", "Zg=="},
                                                                    {"fo", "Zm8="},
                                                                    {"foo", "Zm9v"},
                                                                    {"foob", "Zm9vYg=="},
                                                                    {"fooba", "Zm9vYmE="},
                                                                    {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(EncodeBase64(Span(plain), Base64Alphabet::kStandard), encoded);
    auto decoded = DecodeBase64Standard(encoded);
    ASSERT_TRUE(decoded.ok()) << encoded << ": " << decoded.status().ToString();
    EXPECT_EQ(*decoded, plain);
  }
}

TEST(Base64Test, TheTwoAlphabetsDifferInTheirLastTwoCharacters) {
  const std::string bytes = "\xfb\xff\xbf";
  EXPECT_EQ(EncodeBase64(Span(bytes), Base64Alphabet::kStandard), "+/+/");
  EXPECT_EQ(EncodeBase64(Span(bytes), Base64Alphabet::kUrl), "-_-_");
}

TEST(Base64Test, EveryLengthRoundTrips) {
  std::string bytes;
  for (int i = 0; i < 64; ++i) {
    auto decoded = DecodeBase64Standard(EncodeBase64(Span(bytes), Base64Alphabet::kStandard));
    ASSERT_TRUE(decoded.ok()) << i;
    EXPECT_EQ(*decoded, bytes);
    bytes.push_back(static_cast<char>(i * 37 + 11));
  }
}

TEST(Base64Test, RefusesWhatGoWouldNotWrite) {
  for (const char* text : {"Zg=", "Zg", "Z===", "====", "Zg=A", "Zm9v\n", "Zm-v", "Zm_v", "Zh==", "Zm9=", "Zm 9v"}) {
    auto decoded = DecodeBase64Standard(text);
    EXPECT_FALSE(decoded.ok()) << text;
    EXPECT_EQ(decoded.status().code(), Code::kInvalidArgument) << text;
  }
}

}  // namespace
}  // namespace nbdk
