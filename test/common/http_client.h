// Test-only raw HTTP/1.1 client over TCP: sends bytes, reads until close.
#pragma once

#include <string>

namespace nbdk::test {

struct HttpReply {
  int status = 0;  // 0: no parseable status line
  std::string headers;
  std::string body;
  std::string raw;
};

// Connects to 127.0.0.1:port, writes `request` verbatim, reads the reply
// until the server closes (or `timeout_ms` passes).
HttpReply RawHttp(int port, const std::string& request, int timeout_ms = 5000);
HttpReply HttpGet(int port, const std::string& path);
// A connected TCP socket to 127.0.0.1:port (-1 on failure), its receive
// buffer shrunk to `receive_buffer_bytes` when non-zero (a slow reader).
int OpenTcp(int port, int receive_buffer_bytes = 0);
// A port that was free a moment ago on 127.0.0.1.
int FreePort();

}  // namespace nbdk::test
