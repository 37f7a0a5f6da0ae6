#include "base/quote_field.h"

#include <cstdio>
#include <vector>

namespace nbdk {
namespace {

// One character of the text: a well-formed UTF-8 sequence, or a lone byte
// that is not part of one (valid false).
struct Char {
  size_t bytes = 1;
  char32_t code = 0;
  bool valid = false;
};

// RFC 3629's well-formed sequences: no overlong forms, no surrogates,
// nothing above U+10FFFF.
Char Decode(std::string_view s, size_t at) {
  auto byte = [&s](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char lead = byte(at);
  if (lead < 0x80) return {1, lead, true};
  size_t n = 0;
  char32_t code = 0;
  unsigned char low = 0x80, high = 0xBF;  // the second byte's range
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2, code = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3, code = lead & 0x0F;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4, code = lead & 0x07;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return {1, lead, false};
  }
  if (at + n > s.size()) return {1, lead, false};
  for (size_t i = 1; i < n; ++i) {
    unsigned char b = byte(at + i);
    if (b < (i == 1 ? low : 0x80) || b > (i == 1 ? high : 0xBF)) return {1, lead, false};
    code = (code << 6) | (b & 0x3F);
  }
  return {n, code, true};
}

// Characters a terminal or log viewer acts on instead of showing: C0 and C1
// controls, DEL, line and paragraph separators, and the bidirectional
// controls that reorder what is shown around them.
bool IsHidden(char32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x2028 || c == 0x2029 || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2066 && c <= 0x2069);
}

enum class Mode { kField, kMessage };

// Appends the character at `at` as shown; returns how many bytes of `text`
// it took.
size_t AppendShown(std::string_view text, size_t at, Mode mode, std::string* out) {
  Char c = Decode(text, at);
  if (c.valid && !IsHidden(c.code)) {
    if (mode == Mode::kField && (c.code == '\'' || c.code == '\\')) out->push_back('\\');
    out->append(text.substr(at, c.bytes));
    return c.bytes;
  }
  if (c.valid && c.code == '\n') {
    out->append("\\n");
  } else if (c.valid && c.code == '\t') {
    out->append("\\t");
  } else if (c.valid && c.code == '\r') {
    out->append("\\r");
  } else {
    for (size_t i = 0; i < c.bytes; ++i) {
      char hex[5];
      std::snprintf(hex, sizeof(hex), "\\x%02x", static_cast<unsigned char>(text[at + i]));
      out->append(hex);
    }
  }
  return c.bytes;
}

// The last at most `budget` shown bytes of value[from..], starting on a
// character.
std::string ShownTail(std::string_view value, size_t from, size_t budget) {
  // Each byte shows as at least one byte, so the tail needs no more bytes
  // than the budget; skip continuation bytes to start on a character.
  size_t at = value.size() > from + budget ? value.size() - budget : from;
  for (int i = 0; i < 3 && at < value.size() && (static_cast<unsigned char>(value[at]) & 0xC0) == 0x80; ++i) ++at;
  std::string shown;
  std::vector<size_t> starts;  // where each character begins in `shown`
  while (at < value.size()) {
    starts.push_back(shown.size());
    at += AppendShown(value, at, Mode::kField, &shown);
  }
  for (size_t start : starts) {
    if (shown.size() - start <= budget) return shown.substr(start);
  }
  return "";
}

}  // namespace

std::string QuoteField(std::string_view value) {
  constexpr size_t kHalf = kMaxQuotedBytes / 2;
  std::string shown;
  size_t at = 0, head_end = 0, head_size = 0;
  while (at < value.size() && shown.size() <= kMaxQuotedBytes) {
    at += AppendShown(value, at, Mode::kField, &shown);
    if (shown.size() <= kHalf) head_end = at, head_size = shown.size();
  }
  if (shown.size() <= kMaxQuotedBytes) return "'" + shown + "'";
  shown.resize(head_size);
  return "'" + shown + "…" + ShownTail(value, head_end, kHalf) + "' (" + std::to_string(value.size()) + " bytes)";
}

std::string BoundMessage(std::string_view message, size_t max_bytes) {
  std::string marker = "… (message of " + std::to_string(message.size()) + " bytes cut)";
  size_t budget = max_bytes > marker.size() ? max_bytes - marker.size() : 0;
  std::string out;
  size_t cut = 0;  // out's size after the last character within the budget
  for (size_t at = 0; at < message.size() && out.size() <= max_bytes;) {
    at += AppendShown(message, at, Mode::kMessage, &out);
    if (out.size() <= budget) cut = out.size();
  }
  if (out.size() <= max_bytes) return out;
  out.resize(cut);
  return out + marker;
}

}  // namespace nbdk
