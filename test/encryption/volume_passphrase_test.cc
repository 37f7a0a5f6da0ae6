#include "encryption/volume_passphrase.h"

#include <gtest/gtest.h>

#include <concepts>
#include <cstdint>
#include <fstream>
#include <ostream>
#include <string>
#include <type_traits>

#include "encryption/base64.h"

namespace nbdk {
namespace {

template <typename T>
concept Streamable = requires(std::ostream& os, const T& value) {
  os << value;
};

// A secret is never printable, copied or a string by accident.
static_assert(!Streamable<SecretBytes>);
static_assert(!std::is_copy_constructible_v<SecretBytes> && !std::is_copy_assignable_v<SecretBytes>);
static_assert(std::is_nothrow_move_constructible_v<SecretBytes> && std::is_nothrow_move_assignable_v<SecretBytes>);
static_assert(!std::is_convertible_v<SecretBytes, std::string> &&
              !std::is_convertible_v<SecretBytes, std::string_view>);
static_assert(!std::is_convertible_v<std::string_view, SecretBytes>);

bool InUrlAlphabet(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

TEST(VolumePassphraseTest, IsTwentyRandomBytesInUrlSafePaddedBase64) {
  auto passphrase = GenerateVolumePassphrase();
  ASSERT_TRUE(passphrase.ok()) << passphrase.status().ToString();
  std::string_view text = passphrase->Reveal();
  ASSERT_EQ(text.size(), 28u);
  for (char c : text.substr(0, 27)) EXPECT_TRUE(InUrlAlphabet(c)) << text;
  EXPECT_EQ(text.back(), '=');  // Go's URLEncoding pads 20 bytes to 28 characters
  std::string standard(text);
  for (char& c : standard) c = c == '-' ? '+' : c == '_' ? '/' : c;
  auto bytes = DecodeBase64Standard(standard);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->size(), 20u);
}

TEST(VolumePassphraseTest, TwoAreDifferent) {
  auto a = GenerateVolumePassphrase();
  auto b = GenerateVolumePassphrase();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->Reveal(), b->Reveal());
}

TEST(SecretBytesTest, AMoveHandsTheBytesOverAndEmptiesTheSource) {
  SecretBytes a = SecretBytes::CopyOf("s3cret\n");
  EXPECT_EQ(a.Reveal(), "s3cret\n");
  SecretBytes b = std::move(a);
  EXPECT_EQ(b.Reveal(), "s3cret\n");
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): the contract under test
  EXPECT_EQ(a.Reveal(), "");
  SecretBytes c = SecretBytes::CopyOf("other");
  c = std::move(b);
  EXPECT_EQ(c.Reveal(), "s3cret\n");
  EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move)
}

// The kernel's word for each mapping (smaps' VmFlags): "dd" is
// MADV_DONTDUMP, left out of every core dump.
std::string VmFlagsOf(const void* p) {
  auto at = reinterpret_cast<uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t from = 0, to = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &from, &to) == 2 && line.find(':') > line.find(' ')) {
      inside = from <= at && at < to;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST(SecretBytesTest, NoCoreDumpHoldsASecret) {
  SecretBytes passphrase = SecretBytes::CopyOf("correct horse battery staple");
  std::string flags = VmFlagsOf(passphrase.data());
  ASSERT_FALSE(flags.empty()) << "no mapping holds the secret";
  EXPECT_NE(flags.find(" dd"), std::string::npos) << flags;
  std::string plain(64, 'x');
  EXPECT_EQ(VmFlagsOf(plain.data()).find(" dd"), std::string::npos) << "the heap is dumped: the check can fail";
}

TEST(SecretBytesTest, ZeroedHasItsSizeInZeros) {
  SecretBytes z = SecretBytes::Zeroed(4);
  EXPECT_EQ(z.Reveal(), std::string(4, '\0'));
  EXPECT_TRUE(SecretBytes().empty());
  EXPECT_TRUE(SecretBytes::CopyOf("").empty());
}

}  // namespace
}  // namespace nbdk
