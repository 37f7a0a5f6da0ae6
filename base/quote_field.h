// How outside text appears in an error message: the one rule.
//
// A request field (or a command-line argument) is whatever a caller sent:
// tens of kilobytes, terminal escapes, newlines, bytes that are not UTF-8.
// Pasted raw into a Status message it makes the gRPC status larger than a
// client accepts (the client's connection then hangs, and every later call
// on it), and it writes control sequences into logs and terminals. So every
// error that names such a value quotes it with QuoteField, and every message
// that leaves the process (csi/grpc_status.h, nbdkeeperctl) goes through
// BoundMessage as a last guard whatever a lower layer wrote.
//
// Shown as is: printable ASCII and well-formed UTF-8 of printable characters.
// Escaped: \n, \t, \r; any other C0 control, DEL, a C1 control (U+0080 to
// U+009F), a line or paragraph separator, a bidirectional embedding,
// override or isolate, and every byte that is not part of well-formed UTF-8,
// as \xNN per byte. A cut never splits a character or an escape.
// Pure functions; never pass a secret (a secret is never quoted at all).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nbdk {

// The most of a quoted value an error shows, and the most of a whole message
// that leaves the process: well under gRPC's 8 KiB metadata limit, and one
// screen line or a few in a terminal.
inline constexpr size_t kMaxQuotedBytes = 128;
inline constexpr size_t kMaxMessageBytes = 2048;

// The value in single quotes, escaped as above, with a backslash before '\''
// and '\\' so the quoted text reads back unambiguously. An escaped value
// longer than kMaxQuotedBytes keeps its first and last bytes around an
// ellipsis (a long kubelet path differs in its tail) and states its length:
//   QuoteField("vol-1")                   -> 'vol-1'
//   QuoteField("a\nb")                    -> 'a\nb'
//   QuoteField(std::string(40000, 'a'))   -> 'aaa…aaa' (40000 bytes)
std::string QuoteField(std::string_view value);

// The message escaped as above but with backslashes and quotes left alone
// (so text that QuoteField already escaped is not escaped twice), then, if
// longer than max_bytes, cut on a character boundary and ended with a marker
// stating the original length, the whole at most max_bytes (max_bytes at
// least 64):
//   "...first part of the message… (message of 70012 bytes cut)"
// A message already within the rule comes back unchanged.
std::string BoundMessage(std::string_view message, size_t max_bytes = kMaxMessageBytes);

}  // namespace nbdk
