#include "daemon/ctl/daemon_client.h"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace nbdk::ctl {
namespace {

// connect(2) to a unix socket: 0 or errno.
int ConnectUnix(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    ::close(fd);
    return ENAMETOOLONG;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  int err = rc == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

// One HTTP/1.0 GET over TCP, read until the server closes.
Result<HttpAnswer> HttpGet(const HostPort& hp, const std::string& path) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string host = hp.host.empty() ? "127.0.0.1" : hp.host;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(hp.port).c_str(), &hints, &found); rc != 0) {
    return Status::Unavailable("health endpoint " + host + ": " + ::gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> list(found, ::freeaddrinfo);
  int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::FromErrno(errno, "socket");
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  if (::connect(fd, found->ai_addr, found->ai_addrlen) != 0) {
    int err = errno;
    ::close(fd);
    return Status::Unavailable("health endpoint " + host + ":" + std::to_string(hp.port) + ": " + std::strerror(err));
  }
  std::string request = "GET " + path + " HTTP/1.0\r\nHost: " + host + "\r\n\r\n";
  std::string reply;
  int err = 0;
  ssize_t sent = ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  if (sent != static_cast<ssize_t>(request.size())) {
    err = sent < 0 ? errno : EPIPE;
  } else {
    char buf[16384];
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) reply.append(buf, static_cast<size_t>(n));
    if (n < 0) err = errno;
  }
  ::close(fd);
  const std::string what = "health endpoint " + host + ":" + std::to_string(hp.port) + ", GET " + path;
  if (err != 0) return Status::Unavailable(what + ": " + std::strerror(err));
  auto answer = ParseHttpReply(reply);
  if (!answer.ok()) return answer.status().WithContext(what);
  return answer;
}

}  // namespace

Result<Config> DaemonSettings(const GlobalOptions& global) {
  std::vector<std::string> args = {"nbdkeeperd"};
  // The file the install in docs/operate/systemd.md writes, as the units
  // pass it.
  std::string config = global.config_file;
  if (config.empty() && ::access(kDefaultConfigFile, F_OK) == 0) config = kDefaultConfigFile;
  if (!config.empty()) args.insert(args.end(), {"--config", config});
  if (!global.csi_endpoint.empty()) args.push_back("--csi-endpoint=" + global.csi_endpoint);
  if (!global.health.empty()) args.push_back("--health-listen=" + global.health);
  auto parsed = ParseArgs(args);
  if (!parsed.ok()) return parsed.status();
  return parsed->config;
}

DaemonClient::DaemonClient(std::shared_ptr<grpc::Channel> channel, HostPort health)
    : channel_(std::move(channel)),
      node_(csi::v1::Node::NewStub(channel_)),
      controller_(csi::v1::Controller::NewStub(channel_)),
      health_(std::move(health)) {}

Result<DaemonClient> DaemonClient::Open(const Config& daemon, CtlError* error) {
  const std::string& path = daemon.csi_socket_path;
  int err = ConnectUnix(path);
  if (err == EACCES || err == EPERM) {
    *error = {kExitNoPermission,
              "no permission on " + path +
                  ": run as root, or add your user to the socket's group (nbdkeeperd --socket-group)"};
    return Status::FailedPrecondition(error->message);
  }
  if (err != 0) {
    *error = {kExitNotRunning, "nbdkeeperd is not running (" + path + ": " + std::strerror(err) +
                                   "): start it with `systemctl start nbdkeeperd`"};
    return Status::Unavailable(error->message);
  }
  return DaemonClient(grpc::CreateChannel("unix://" + path, grpc::InsecureChannelCredentials()), daemon.health);
}

Result<HttpAnswer> DaemonClient::Get(const std::string& path) const { return HttpGet(health_, path); }

Result<DaemonStatus> DaemonClient::GetStatus() const {
  auto page = Get("/status");
  if (!page.ok()) return page.status();
  if (page->status != 200) return Status::Unavailable("/status answered HTTP " + std::to_string(page->status));
  return ParseDaemonStatus(page->body);
}

bool DaemonClient::WaitReady(int timeout_ms) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  do {
    auto r = Get("/readyz");
    if (r.ok() && r->status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (std::chrono::steady_clock::now() < deadline);
  return false;
}

CtlError FromGrpc(const grpc::Status& status, const std::string& what) {
  const std::string& m = status.error_message();
  std::string hint;
  auto has = [&m](const char* s) { return m.find(s) != std::string::npos; };
  if (has("(2) No such file or directory") || has("error opening image") || has("image not found")) {
    return {kExitNotFound, what + ": the image does not exist (create it with --size, or `rbd create`): " + m};
  }
  if (has("(1) Operation not permitted") || has("(13) Permission denied") || has("auth")) {
    hint = " - is the key right for this user (--id, --keyfile)?";
  }
  if (has("already staged on this node")) hint = " - unmap the other volume first";
  switch (status.error_code()) {
    case grpc::StatusCode::NOT_FOUND:
      return {kExitNotFound, what + ": " + m};
    case grpc::StatusCode::UNAVAILABLE:
      // The daemon answered: it runs, but cannot do this now.
      return {kExitFailed, what + ": " + m + hint};
    default:
      return {kExitFailed, what + ": " + m + hint};
  }
}

}  // namespace nbdk::ctl
