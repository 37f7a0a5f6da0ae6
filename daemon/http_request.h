// HttpRequestReader: one HTTP/1.1 request, parsed incrementally as the
// health endpoint reads it from a socket in pieces of any size. Pure (no
// I/O), so this parser of outside input is fuzzed apart from the server.
// Parsing is http_parser's. One request per connection: bytes after the
// first complete request are ignored.
#pragma once

#include <http_parser.h>

#include <string>
#include <string_view>

namespace nbdk {

class HttpRequestReader {
 public:
  enum class State { kIncomplete, kComplete, kMalformed };

  HttpRequestReader();
  // http_parser keeps a pointer to this object.
  HttpRequestReader(const HttpRequestReader&) = delete;
  HttpRequestReader& operator=(const HttpRequestReader&) = delete;

  // Parses the next bytes; once kComplete or kMalformed, reads nothing more.
  // No bytes change nothing: the end of the stream is the caller's to see.
  State Feed(std::string_view bytes);

  State state() const { return state_; }
  // http_parser's method (HTTP_GET, HTTP_HEAD, ...) and the raw request
  // target; meaningful once kComplete.
  int method() const { return parser_.method; }
  const std::string& url() const { return url_; }
  // http_parser's description of what is wrong; meaningful once kMalformed.
  std::string error() const;

 private:
  http_parser parser_{};
  http_parser_settings settings_{};
  std::string url_;
  bool message_complete_ = false;
  State state_ = State::kIncomplete;
};

}  // namespace nbdk
