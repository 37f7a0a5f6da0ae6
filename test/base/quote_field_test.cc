#include "base/quote_field.h"

#include <gtest/gtest.h>

namespace nbdk {
namespace {

TEST(QuoteFieldTest, ShortPrintableValuesAreQuotedWhole) {
  EXPECT_EQ(QuoteField(""), "''");
  EXPECT_EQ(QuoteField("vol-1"), "'vol-1'");
  std::string id(128, 'v');  // the longest volume ID is shown whole
  EXPECT_EQ(QuoteField(id), "'" + id + "'");
}

TEST(QuoteFieldTest, ControlAndNonUtf8BytesAreEscaped) {
  EXPECT_EQ(QuoteField("a\nb\tc\rd"), "'a\\nb\\tc\\rd'");
  EXPECT_EQ(QuoteField("\x1b[31mred"), "'\\x1b[31mred'");
  EXPECT_EQ(QuoteField(std::string("nul\0x", 5)), "'nul\\x00x'");
  EXPECT_EQ(QuoteField("del\x7f"), "'del\\x7f'");
  EXPECT_EQ(QuoteField("it's a\\b"), "'it\\'s a\\\\b'");
  // Not UTF-8: a lone continuation byte, a truncated sequence, an overlong
  // '/', a surrogate, and a byte that never occurs.
  EXPECT_EQ(QuoteField("\x80"), "'\\x80'");
  EXPECT_EQ(QuoteField("\xc3"), "'\\xc3'");
  EXPECT_EQ(QuoteField("\xc0\xaf"), "'\\xc0\\xaf'");
  EXPECT_EQ(QuoteField("\xed\xa0\x80"), "'\\xed\\xa0\\x80'");
  EXPECT_EQ(QuoteField("\xff"), "'\\xff'");
  // C1 controls (U+009B is CSI), a line separator and a right-to-left
  // override are well-formed but act on a terminal: escaped too.
  EXPECT_EQ(QuoteField("\xc2\x9b"), "'\\xc2\\x9b'");
  EXPECT_EQ(QuoteField("a\xe2\x80\xa8"), "'a\\xe2\\x80\\xa8'");
  EXPECT_EQ(QuoteField("\xe2\x80\xae"), "'\\xe2\\x80\\xae'");
}

TEST(QuoteFieldTest, Utf8IsKept) { EXPECT_EQ(QuoteField("größe-日本-😀"), "'größe-日本-😀'"); }

TEST(QuoteFieldTest, LongValuesKeepHeadAndTailAndStateTheirLength) {
  std::string half(kMaxQuotedBytes / 2, 'a');
  EXPECT_EQ(QuoteField(std::string(40000, 'a')), "'" + half + "…" + half + "' (40000 bytes)");
  EXPECT_EQ(QuoteField(std::string(129, 'a')), "'" + half + "…" + half + "' (129 bytes)");
  // A kubelet staging path: its distinguishing tail stays.
  std::string path =
      "/var/lib/kubelet/plugins/kubernetes.io/csi/rbd.csi.ceph.com/" + std::string(64, 'f') + "/globalmount";
  std::string q = QuoteField(path);
  EXPECT_TRUE(q.starts_with("'/var/lib/kubelet/plugins/")) << q;
  EXPECT_TRUE(q.ends_with("/globalmount' (" + std::to_string(path.size()) + " bytes)")) << q;
}

TEST(QuoteFieldTest, ACutNeverSplitsACharacterOrAnEscape) {
  // 100 two-byte characters: each half holds 32 whole ones.
  std::string e32;
  for (int i = 0; i < 32; ++i) e32 += "é";
  std::string many;
  for (int i = 0; i < 100; ++i) many += "é";
  EXPECT_EQ(QuoteField(many), "'" + e32 + "…" + e32 + "' (200 bytes)");
  // 50 escapes of four bytes: 200 shown, cut to 16 + 16 whole escapes.
  std::string x16;
  for (int i = 0; i < 16; ++i) x16 += "\\x01";
  EXPECT_EQ(QuoteField(std::string(50, '\x01')), "'" + x16 + "…" + x16 + "' (50 bytes)");
}

// No byte a terminal acts on: C0 controls, DEL, and C1 controls (in UTF-8,
// 0xc2 followed by 0x80 to 0x9f).
bool OneInertLine(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x20 || b == 0x7f) return false;
    if (b == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9f) return false;
  }
  return true;
}

TEST(QuoteFieldTest, WhateverIsSentTheQuoteIsBoundedAndInert) {
  std::string junk;
  for (int i = 0; i < 70000; ++i) junk.push_back(static_cast<char>(i * 37 + i / 256));
  for (size_t length : {1, 7, 64, 129, 300, 70000}) {
    std::string q = QuoteField(junk.substr(junk.size() - length));
    EXPECT_LE(q.size(), kMaxQuotedBytes + 40) << length;
    EXPECT_TRUE(OneInertLine(q)) << q;
    EXPECT_EQ(BoundMessage(q), q) << "a quote passes the last guard unchanged";
    std::string b = BoundMessage(junk.substr(0, length));
    EXPECT_LE(b.size(), kMaxMessageBytes) << length;
    EXPECT_TRUE(OneInertLine(b)) << b;
  }
}

TEST(BoundMessageTest, ShortMessagesPassUnchanged) {
  EXPECT_EQ(BoundMessage(""), "");
  std::string m = "volume_context: mounter: 'rbd\\n' is not supported";
  EXPECT_EQ(BoundMessage(m), m) << "text QuoteField escaped is not escaped again";
  EXPECT_EQ(BoundMessage("größe 'x'"), "größe 'x'");
}

TEST(BoundMessageTest, ControlCharactersAreEscapedOntoOneLine) {
  EXPECT_EQ(BoundMessage("first\nsecond\x1b[2J\xff"), "first\\nsecond\\x1b[2J\\xff");
}

TEST(BoundMessageTest, LongMessagesAreCutOnACharacterWithAMarker) {
  std::string m = "x: " + std::string(70000, 'a');
  std::string b = BoundMessage(m);
  EXPECT_EQ(b.size(), kMaxMessageBytes);
  EXPECT_TRUE(b.starts_with("x: aaa")) << b.substr(0, 20);
  EXPECT_TRUE(b.ends_with("aaa… (message of 70003 bytes cut)")) << b.substr(b.size() - 60);
  // A cut inside a three-byte character leaves the whole character out.
  std::string wide;
  for (int i = 0; i < 1000; ++i) wide += "日";
  b = BoundMessage(wide, 100);
  EXPECT_LE(b.size(), 100u);
  std::string marker = "… (message of 3000 bytes cut)";
  ASSERT_TRUE(b.ends_with(marker)) << b;
  EXPECT_EQ((b.size() - marker.size()) % 3, 0u) << b;
  // Escapes expand a message up to four times; the bound holds anyway.
  EXPECT_LE(BoundMessage(std::string(5000, '\x1b')).size(), kMaxMessageBytes);
}

}  // namespace
}  // namespace nbdk
