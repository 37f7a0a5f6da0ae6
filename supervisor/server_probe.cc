#include "supervisor/server_probe.h"

#include <arpa/inet.h>
#include <poll.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "base/kernel_file.h"
#include "base/unique_fd.h"

namespace nbdk {
namespace {

// A reply larger than this is not objecter_requests of one rbd-nbd.
constexpr uint32_t kMaxReply = 8 << 20;

using Clock = std::chrono::steady_clock;

// Waits for `events` on `fd` until `deadline`; false on timeout or error.
bool Wait(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>(left));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

// DeadlineExceeded only when the time ran out: a socket that closed or
// failed did answer, with nothing to read (Unavailable).
Status ReadFull(int fd, char* out, size_t size, Clock::time_point deadline, const std::string& path) {
  while (size > 0) {
    if (!Wait(fd, POLLIN, deadline)) return Status::DeadlineExceeded(path + ": no answer in time");
    ssize_t n = ::read(fd, out, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Unavailable("read " + path + ": " + std::strerror(errno));
    if (n == 0) return Status::Unavailable(path + ": closed without an answer");
    out += n;
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

// Ceph's admin socket: the command as JSON and a NUL; the answer is a
// 32-bit big-endian length and that many bytes.
Result<std::string> AskAdminSocket(const std::string& path, const std::string& command, uint64_t timeout_ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return Status::InvalidArgument(path + ": too long for a unix socket");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) return Status::FromErrno(errno, "socket for " + path);
  // A unix socket connects at once or fails (EAGAIN: its backlog is full).
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return Status::FromErrno(errno, "connect " + path);
  }
  std::string request = command;
  request.push_back('\0');
  size_t sent = 0;
  while (sent < request.size()) {
    if (!Wait(fd.get(), POLLOUT, deadline)) return Status::DeadlineExceeded(path + ": no room to send");
    ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return Status::FromErrno(errno, "send to " + path);
    sent += static_cast<size_t>(n);
  }
  uint32_t length = 0;
  Status got = ReadFull(fd.get(), reinterpret_cast<char*>(&length), sizeof length, deadline, path);
  if (got.code() == Code::kDeadlineExceeded) {
    return Status::DeadlineExceeded(path + ": no answer within " + std::to_string(timeout_ms) + " ms");
  }
  NBDK_RETURN_IF_ERROR(got);
  length = ntohl(length);
  if (length > kMaxReply) return Status::InvalidArgument(path + ": answer of " + std::to_string(length) + " bytes");
  std::string reply(length, '\0');
  NBDK_RETURN_IF_ERROR(ReadFull(fd.get(), reply.data(), length, deadline, path));
  return reply;
}

}  // namespace

std::string AdminSocketDir(const SupervisorConfig& config) { return config.state_dir + "/asok"; }

std::vector<std::string> AdminSocketArgv(const SupervisorConfig& config) {
  return {"--admin-socket", AdminSocketDir(config) + "/$pid.asok"};
}

std::string AdminSocketPath(const SupervisorConfig& config, int pid) {
  return AdminSocketDir(config) + "/" + std::to_string(pid) + ".asok";
}

Result<char> ParseProcessState(std::string_view stat) {
  size_t close = stat.rfind(')');
  if (close == std::string_view::npos || close + 2 >= stat.size() || stat[close + 1] != ' ') {
    return Status::InvalidArgument("/proc stat: no state after the command name");
  }
  return stat[close + 2];
}

Result<LibradosOps> ParseObjecterRequests(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return Status::InvalidArgument(std::string("objecter_requests: ") +
                                   rapidjson::GetParseError_En(doc.GetParseError()) + " at offset " +
                                   std::to_string(doc.GetErrorOffset()));
  }
  if (!doc.IsObject()) return Status::InvalidArgument("objecter_requests: not a JSON object");
  auto ops = doc.FindMember("ops");
  if (ops == doc.MemberEnd() || !ops->value.IsArray()) {
    return Status::InvalidArgument("objecter_requests: no \"ops\" array");
  }
  LibradosOps out;
  for (const auto& op : ops->value.GetArray()) {
    if (!op.IsObject()) return Status::InvalidArgument("objecter_requests: an op is not an object");
    auto osd = op.FindMember("osd");
    auto age = op.FindMember("age");
    if (osd == op.MemberEnd() || !osd->value.IsInt()) {
      return Status::InvalidArgument("objecter_requests: an op without an integer \"osd\"");
    }
    if (age == op.MemberEnd() || !age->value.IsNumber() || age->value.GetDouble() < 0) {
      return Status::InvalidArgument("objecter_requests: an op without a non-negative \"age\"");
    }
    ++out.count;
    out.osds.insert(osd->value.GetInt());
    out.oldest_age_s = std::max(out.oldest_age_s, age->value.GetDouble());
  }
  return out;
}

ServerProbe ProbeServer(const SupervisorConfig& config, int pid, uint64_t timeout_ms) {
  ServerProbe probe;
  auto text = ReadKernelFile("/proc/" + std::to_string(pid) + "/stat");
  auto state = text.ok() ? ParseProcessState(*text) : Result<char>(text.status());
  probe.stopped = state.ok() && (*state == 'T' || *state == 't');
  if (probe.stopped) return probe;
  std::string path = AdminSocketPath(config, pid);
  struct stat st;
  probe.has_admin_socket = ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
  if (!probe.has_admin_socket) return probe;
  auto reply = AskAdminSocket(path, R"({"prefix":"objecter_requests"})", timeout_ms);
  if (!reply.ok()) {
    probe.silent = reply.status().code() == Code::kDeadlineExceeded;
    probe.error = reply.status().message();
    return probe;
  }
  auto ops = ParseObjecterRequests(*reply);
  if (!ops.ok()) {
    probe.error = ops.status().message();
    return probe;
  }
  probe.ops = *ops;
  return probe;
}

}  // namespace nbdk
