#include "csi/csi_server.h"

#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>

#include "base/log.h"

namespace nbdk {
namespace {

// Whether something accepts connections on the unix socket at `path`.
bool SomeoneListens(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
  bool live = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return live;
}

}  // namespace

Status ClaimSocketPath(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return Status::FromErrno(errno, "stat " + path);
  }
  if (!S_ISSOCK(st.st_mode)) {
    return Status::FailedPrecondition(path + " exists and is not a socket; refusing to replace it");
  }
  if (SomeoneListens(path)) {
    return Status::AlreadyExists("another nbdkeeperd is already running on " + path);
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Status::FromErrno(errno, "remove stale socket " + path);
  NBDK_LOG_WARN("stale_socket_removed", {{"path", path}});
  return Status::Ok();
}

Result<std::unique_ptr<CsiServer>> CsiServer::Start(const CsiServerOptions& options,
                                                    const std::vector<grpc::Service*>& services) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::path(options.socket_path).parent_path();
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IoError("create socket directory " + dir.string() + ": " + ec.message());
  NBDK_RETURN_IF_ERROR(ClaimSocketPath(options.socket_path));

  gid_t gid = static_cast<gid_t>(-1);
  if (!options.socket_group.empty()) {
    group* g = ::getgrnam(options.socket_group.c_str());
    if (g == nullptr) return Status::InvalidArgument("socket_group '" + options.socket_group + "': no such group");
    gid = g->gr_gid;
  }

  grpc::ServerBuilder builder;
  int selected_port = 0;
  builder.AddListeningPort("unix:" + options.socket_path, grpc::InsecureServerCredentials(), &selected_port);
  for (grpc::Service* s : services) builder.RegisterService(s);
  mode_t old_umask = ::umask(0177);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ::umask(old_umask);
  if (server == nullptr || selected_port == 0) {
    return Status::Unavailable("gRPC server failed to listen on unix:" + options.socket_path);
  }
  auto owned = std::make_unique<CsiServer>(options.socket_path, std::move(server));
  if (::chmod(options.socket_path.c_str(), options.socket_mode) != 0) {
    return Status::FromErrno(errno, "chmod " + options.socket_path);
  }
  if (gid != static_cast<gid_t>(-1) && ::chown(options.socket_path.c_str(), -1, gid) != 0) {
    return Status::FromErrno(errno, "chown " + options.socket_path + " to group " + options.socket_group);
  }
  return owned;
}

CsiServer::CsiServer(std::string path, std::unique_ptr<grpc::Server> server)
    : path_(std::move(path)), server_(std::move(server)) {}

CsiServer::~CsiServer() { Stop(0); }

void CsiServer::Stop(int grace_ms) {
  if (stopped_) return;
  stopped_ = true;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(grace_ms));
  server_->Wait();
  ::unlink(path_.c_str());
}

}  // namespace nbdk
