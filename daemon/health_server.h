// HealthServer: a small HTTP/1.1 server on the loop for /healthz, /readyz,
// /metrics and /status.
//
// It runs on the loop thread itself, so a stuck loop makes /healthz time out
// rather than answer 200. One request per connection (responses carry
// "Connection: close"). GET (and HEAD) only: other methods get 405, unknown
// paths 404, requests over the size limit or that do not parse 400, and a
// connection idle past the timeout is closed. Parsing is http_parser's.
//
// No client can hold the endpoint: a request must arrive within
// idle_timeout_ms and its response must be taken within write_timeout_ms
// (a client that never reads is reset, dropping what it did not take).
// When all max_connections slots are taken, a new connection evicts the
// oldest one still waiting for its request (else the oldest of all): a
// probe's request arrives within milliseconds of its accept, so the oldest
// waiting connection is the one least likely to be a probe, and /healthz
// and /readyz are still answered under a flood of idle connections. A
// reserved slot would not be enough: the flood would take it too.
// Loop thread only.
#pragma once

#include <uv.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "base/event_loop.h"
#include "base/uv_handle.h"
#include "daemon/config.h"

namespace nbdk {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

class HealthServer {
 public:
  struct Options {
    size_t max_request_bytes = 8192;
    uint64_t idle_timeout_ms = 10000;
    uint64_t write_timeout_ms = 10000;
    size_t max_connections = 512;
  };
  using Handler = std::function<HttpResponse()>;

  HealthServer(EventLoop& loop, Options options);
  ~HealthServer();
  HealthServer(const HealthServer&) = delete;
  HealthServer& operator=(const HealthServer&) = delete;

  // Registers a GET handler for an exact path (query strings are ignored).
  void Route(std::string path, Handler handler);
  // Binds and listens. Port 0 picks a free port (see port()).
  Status Listen(const HostPort& address);
  int port() const { return port_; }
  // Stops listening and closes every open connection.
  void Close();

 private:
  class Connection;
  struct ListenState {
    HealthServer* server = nullptr;
  };

  void OnConnection();
  // Closes the oldest connection still reading its request, else the
  // oldest of all, to make room for a new one.
  void EvictOne();
  void Finish(Connection* conn);
  HttpResponse Dispatch(int method, const std::string& url) const;

  EventLoop& loop_;
  Options options_;
  std::map<std::string, Handler> routes_;
  OwnedHandle<uv_tcp_t, ListenState> listener_;
  std::map<Connection*, std::unique_ptr<Connection>> connections_;
  uint64_t accepted_ = 0;  // numbers connections in accept order
  int port_ = 0;
};

// "HTTP/1.1 404 Not Found\r\n..." - exposed for tests.
std::string SerializeHttpResponse(const HttpResponse& r, bool head_only);

}  // namespace nbdk
