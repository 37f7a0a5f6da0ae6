#include "daemon/health_server.h"

#include <sys/socket.h>

#include "base/log.h"
#include "daemon/http_request.h"

namespace nbdk {
namespace {

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

HttpResponse Plain(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

}  // namespace

std::string SerializeHttpResponse(const HttpResponse& r, bool head_only) {
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + Reason(r.status) + "\r\n";
  out += "Content-Type: " + r.content_type + "\r\n";
  out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  if (r.status == 405) out += "Allow: GET, HEAD\r\n";
  out += "Connection: close\r\n\r\n";
  if (!head_only) out += r.body;
  return out;
}

// One accepted client: reads one request, writes one response, closes.
class HealthServer::Connection {
 public:
  Connection(HealthServer& server, uint64_t order)
      : server_(server), order_(order), read_deadline_(server.loop_), write_deadline_(server.loop_) {
    uv_tcp_init(server.loop_.uv(), tcp_.handle());
    tcp_.MarkInitialized();
    tcp_.state().conn = this;
  }
  ~Connection() { tcp_.state().conn = nullptr; }

  uv_stream_t* stream() { return reinterpret_cast<uv_stream_t*>(tcp_.handle()); }
  uint64_t order() const { return order_; }
  bool responded() const { return responded_; }

  void Start() {
    read_deadline_.Start(server_.options_.idle_timeout_ms, 0, [this] { Respond(Plain(408, "idle timeout\n"), false); });
    uv_read_start(
        stream(),
        [](uv_handle_t* h, size_t, uv_buf_t* buf) {
          auto* box = OwnedHandle<uv_tcp_t, TcpState>::BoxOf(reinterpret_cast<uv_tcp_t*>(h));
          *buf = uv_buf_init(box->state.buffer, sizeof(box->state.buffer));
        },
        [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
          auto* box = OwnedHandle<uv_tcp_t, TcpState>::BoxOf(reinterpret_cast<uv_tcp_t*>(s));
          if (box->state.conn != nullptr) box->state.conn->OnRead(n, buf->base);
        });
  }

 private:
  struct TcpState {
    Connection* conn = nullptr;
    char buffer[4096];
  };
  struct WriteReq {
    uv_write_t req;
    std::string data;
  };

  void OnRead(ssize_t n, const char* data) {
    if (responded_) return;
    if (n < 0) {  // EOF or error before a whole request: nothing to answer
      server_.Finish(this);
      return;
    }
    received_ += static_cast<size_t>(n);
    if (received_ > server_.options_.max_request_bytes) {
      Respond(Plain(400, "request larger than " + std::to_string(server_.options_.max_request_bytes) + " bytes\n"),
              false);
      return;
    }
    switch (request_.Feed(std::string_view(data, static_cast<size_t>(n)))) {
      case HttpRequestReader::State::kMalformed:
        Respond(Plain(400, "malformed request: " + request_.error() + "\n"), false);
        return;
      case HttpRequestReader::State::kComplete:
        Respond(server_.Dispatch(request_.method(), request_.url()), request_.method() == HTTP_HEAD);
        return;
      case HttpRequestReader::State::kIncomplete:
        return;
    }
  }

  void Respond(const HttpResponse& response, bool head_only) {
    responded_ = true;
    read_deadline_.Stop();
    uv_read_stop(stream());
    write_deadline_.Start(server_.options_.write_timeout_ms, 0, [this] { ResetSlowReader(); });
    auto w = std::make_unique<WriteReq>();
    w->data = SerializeHttpResponse(response, head_only);
    uv_buf_t buf = uv_buf_init(w->data.data(), static_cast<unsigned>(w->data.size()));
    int rc = uv_write(&w->req, stream(), &buf, 1, [](uv_write_t* req, int) {
      std::unique_ptr<WriteReq> owned(reinterpret_cast<WriteReq*>(req));
      auto* box = OwnedHandle<uv_tcp_t, TcpState>::BoxOf(reinterpret_cast<uv_tcp_t*>(req->handle));
      if (box->state.conn != nullptr) box->state.conn->server_.Finish(box->state.conn);
    });
    if (rc == 0) {
      w.release();  // freed by the write callback
    } else {
      server_.Finish(this);
    }
  }

  // The client did not take its response in time: close with a reset
  // (SO_LINGER 0), so the kernel drops the unsent rest instead of keeping
  // it queued for a client that does not read.
  void ResetSlowReader() {
    NBDK_LOG_WARN("health_write_timeout", {{"ms", server_.options_.write_timeout_ms}});
    uv_os_fd_t fd;
    if (uv_fileno(reinterpret_cast<uv_handle_t*>(tcp_.handle()), &fd) == 0) {
      linger reset{1, 0};
      setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    }
    server_.Finish(this);
  }

  HealthServer& server_;
  uint64_t order_;
  OwnedHandle<uv_tcp_t, TcpState> tcp_;
  Timer read_deadline_;   // for the whole request
  Timer write_deadline_;  // for the whole response
  HttpRequestReader request_;
  size_t received_ = 0;
  bool responded_ = false;
};

HealthServer::HealthServer(EventLoop& loop, Options options) : loop_(loop), options_(options) {}

HealthServer::~HealthServer() { Close(); }

void HealthServer::Route(std::string path, Handler handler) { routes_[std::move(path)] = std::move(handler); }

Status HealthServer::Listen(const HostPort& address) {
  sockaddr_storage addr{};
  int rc = uv_ip4_addr(address.host.c_str(), address.port, reinterpret_cast<sockaddr_in*>(&addr));
  if (rc != 0) rc = uv_ip6_addr(address.host.c_str(), address.port, reinterpret_cast<sockaddr_in6*>(&addr));
  if (rc != 0) return Status::InvalidArgument("health address '" + address.host + "' is not an IP address");
  uv_tcp_init(loop_.uv(), listener_.handle());
  listener_.MarkInitialized();
  listener_.state().server = this;
  std::string where = address.host + ":" + std::to_string(address.port);
  rc = uv_tcp_bind(listener_.handle(), reinterpret_cast<sockaddr*>(&addr), 0);
  if (rc == 0) {
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(listener_.handle()), 128, [](uv_stream_t* s, int status) {
      auto* box = OwnedHandle<uv_tcp_t, ListenState>::BoxOf(reinterpret_cast<uv_tcp_t*>(s));
      if (status == 0 && box->state.server != nullptr) box->state.server->OnConnection();
    });
  }
  if (rc != 0) return Status::FromErrno(-rc, "health endpoint listen on " + where);
  sockaddr_storage bound{};
  int len = sizeof(bound);
  uv_tcp_getsockname(listener_.handle(), reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return Status::Ok();
}

void HealthServer::OnConnection() {
  auto conn = std::make_unique<Connection>(*this, ++accepted_);
  if (uv_accept(reinterpret_cast<uv_stream_t*>(listener_.handle()), conn->stream()) != 0) return;
  if (connections_.size() >= options_.max_connections) EvictOne();
  Connection* raw = conn.get();
  connections_[raw] = std::move(conn);
  raw->Start();
}

void HealthServer::EvictOne() {
  Connection* oldest_waiting = nullptr;
  Connection* oldest = nullptr;
  for (const auto& [raw, conn] : connections_) {
    if (!oldest || raw->order() < oldest->order()) oldest = raw;
    if (!raw->responded() && (!oldest_waiting || raw->order() < oldest_waiting->order())) oldest_waiting = raw;
  }
  Connection* victim = oldest_waiting ? oldest_waiting : oldest;
  if (!victim) return;
  NBDK_LOG_WARN("health_connection_evicted", {{"open", connections_.size()}, {"waiting", victim == oldest_waiting}});
  Finish(victim);
}

void HealthServer::Finish(Connection* conn) { connections_.erase(conn); }

HttpResponse HealthServer::Dispatch(int method, const std::string& url) const {
  std::string path = url.substr(0, url.find('?'));
  auto it = routes_.find(path);
  if (it == routes_.end()) return Plain(404, "no such path: " + path + "\n");
  if (method != HTTP_GET && method != HTTP_HEAD) return Plain(405, "only GET and HEAD are allowed\n");
  return it->second();
}

void HealthServer::Close() {
  listener_.Close();
  connections_.clear();
}

}  // namespace nbdk
