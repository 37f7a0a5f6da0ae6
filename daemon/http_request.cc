#include "daemon/http_request.h"

namespace nbdk {

HttpRequestReader::HttpRequestReader() {
  http_parser_init(&parser_, HTTP_REQUEST);
  parser_.data = this;
  http_parser_settings_init(&settings_);
  settings_.on_url = [](http_parser* p, const char* at, size_t len) {
    static_cast<HttpRequestReader*>(p->data)->url_.append(at, len);
    return 0;
  };
  settings_.on_message_complete = [](http_parser* p) {
    static_cast<HttpRequestReader*>(p->data)->message_complete_ = true;
    // Stop here, so that bytes after the request never reach url_.
    http_parser_pause(p, 1);
    return 0;
  };
}

HttpRequestReader::State HttpRequestReader::Feed(std::string_view bytes) {
  // http_parser reads no bytes as the end of the stream, and a socket read
  // may return none without being one.
  if (state_ != State::kIncomplete || bytes.empty()) return state_;
  size_t parsed = http_parser_execute(&parser_, &settings_, bytes.data(), bytes.size());
  if (message_complete_) {
    state_ = State::kComplete;
  } else if (HTTP_PARSER_ERRNO(&parser_) != HPE_OK || parsed != bytes.size()) {
    state_ = State::kMalformed;
  }
  return state_;
}

std::string HttpRequestReader::error() const { return http_errno_description(HTTP_PARSER_ERRNO(&parser_)); }

}  // namespace nbdk
