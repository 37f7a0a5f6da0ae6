// ParseHttpReply: the daemon's answer to one GET of nbdkeeperctl, read
// whole (the request is HTTP/1.0, so the daemon closes after answering).
// Parsing is http_parser's, as the daemon's own request parsing is: status
// line, headers, and a body by Content-Length, chunked or up to the close.
// Pure, so it is tested apart from the socket.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace nbdk::ctl {

struct HttpAnswer {
  int status = 0;
  std::string body;  // de-chunked
};

// Unavailable naming what is wrong unless `reply` holds one complete
// response: empty, not HTTP, or cut short before its body ends. Bytes after
// the first response are ignored.
Result<HttpAnswer> ParseHttpReply(std::string_view reply);

}  // namespace nbdk::ctl
