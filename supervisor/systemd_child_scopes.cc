#include "supervisor/systemd_child_scopes.h"

#include <sys/socket.h>
#include <systemd/sd-bus.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

namespace nbdk {
namespace {

constexpr const char* kService = "org.freedesktop.systemd1";
constexpr const char* kPath = "/org/freedesktop/systemd1";
constexpr const char* kManager = "org.freedesktop.systemd1.Manager";
constexpr const char* kUnitExists = "org.freedesktop.systemd1.UnitExists";
constexpr uint64_t kCallTimeoutUsec = 10'000'000;
constexpr int kNameAttempts = 5;
constexpr auto kNameRetryDelay = std::chrono::milliseconds(200);
constexpr auto kJoinWait = std::chrono::milliseconds(2000);
constexpr auto kJoinPoll = std::chrono::milliseconds(10);

struct BusCloser {
  void operator()(sd_bus* bus) const { sd_bus_flush_close_unref(bus); }
};
using BusPtr = std::unique_ptr<sd_bus, BusCloser>;
struct MessageUnref {
  void operator()(sd_bus_message* m) const { sd_bus_message_unref(m); }
};
using MessagePtr = std::unique_ptr<sd_bus_message, MessageUnref>;

// One sd_bus_error, freed on every path.
struct BusError {
  sd_bus_error e = SD_BUS_ERROR_NULL;
  ~BusError() { sd_bus_error_free(&e); }
  bool Is(const char* name) const { return sd_bus_error_has_name(&e, name); }
  Status ToStatus(int r, const std::string& what) const {
    if (sd_bus_error_is_set(&e)) return Status::Unavailable(what + ": " + e.name + ": " + (e.message ? e.message : ""));
    return Status::Unavailable(what + ": " + std::strerror(-r));
  }
};

// systemd's own socket, as systemctl uses it as root: no D-Bus daemon needed.
constexpr const char* kPrivateSocket = "unix:path=/run/systemd/private";

Result<BusPtr> ConnectTo(const std::string& address) {
  sd_bus* raw = nullptr;
  int r = 0;
  std::string where = address.empty() ? "the system bus" : address;
  if (address.empty()) {
    r = sd_bus_open_system(&raw);
  } else {
    r = sd_bus_new(&raw);
    if (r >= 0) r = sd_bus_set_address(raw, address.c_str());
    if (r >= 0) r = sd_bus_start(raw);
  }
  BusPtr bus(raw);
  if (r < 0) return Status::Unavailable("connect to systemd over " + where + ": " + std::strerror(-r));
  ucred peer{};
  socklen_t len = sizeof(peer);
  if (::getsockopt(sd_bus_get_fd(bus.get()), SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
    return Status::Unavailable("peer of " + where + ": " + std::strerror(errno));
  }
  if (peer.pid == 0) {
    return Status::FailedPrecondition("the peer of " + where +
                                      " is outside this pid namespace (hostPID is needed): systemd would read "
                                      "our child's pid as another process");
  }
  return bus;
}

// An explicit address, or else systemd's private socket, else the system bus.
Result<BusPtr> Connect(const std::string& address) {
  if (!address.empty()) return ConnectTo(address);
  auto direct = ConnectTo(kPrivateSocket);
  if (direct.ok() || direct.status().code() != Code::kUnavailable) return direct;
  auto bus = ConnectTo("");
  if (bus.ok() || bus.status().code() != Code::kUnavailable) return bus;
  return Status::Unavailable(direct.status().message() + "; " + bus.status().message());
}

Result<MessagePtr> NewManagerCall(sd_bus* bus, const char* method) {
  sd_bus_message* raw = nullptr;
  int r = sd_bus_message_new_method_call(bus, &raw, kService, kPath, kManager, method);
  if (r < 0) return Status::Internal(std::string("build ") + method + ": " + std::strerror(-r));
  return MessagePtr(raw);
}

// StartTransientUnit(name, "fail", properties, no auxiliary units).
int StartScope(sd_bus* bus, const std::string& unit, const std::string& volume_id, int pid, BusError& error) {
  auto m = NewManagerCall(bus, "StartTransientUnit");
  if (!m.ok()) return -EINVAL;
  sd_bus_message* msg = m->get();
  std::string description = "rbd-nbd of volume " + volume_id + " (nbdkeeper)";
  int r = sd_bus_message_append(msg, "ss", unit.c_str(), "fail");
  if (r >= 0) r = sd_bus_message_open_container(msg, 'a', "(sv)");
  if (r >= 0) r = sd_bus_message_append(msg, "(sv)", "Description", "s", description.c_str());
  if (r >= 0) r = sd_bus_message_append(msg, "(sv)", "PIDs", "au", 1, static_cast<uint32_t>(pid));
  if (r >= 0) r = sd_bus_message_append(msg, "(sv)", "CollectMode", "s", "inactive-or-failed");
  if (r >= 0) r = sd_bus_message_append(msg, "(sv)", "DefaultDependencies", "b", 0);
  // The device policy rbd-nbd had in nbdkeeperd.service's cgroup.
  if (r >= 0) r = sd_bus_message_append(msg, "(sv)", "DevicePolicy", "s", "closed");
  if (r >= 0) r = sd_bus_message_append(msg, "(sv)", "DeviceAllow", "a(ss)", 1, "block-nbd", "rw");
  if (r >= 0) r = sd_bus_message_close_container(msg);
  if (r >= 0) r = sd_bus_message_append(msg, "a(sa(sv))", 0);
  if (r < 0) return r;
  return sd_bus_call(bus, msg, kCallTimeoutUsec, &error.e, nullptr);
}

// AttachProcessesToUnit(name, "/", [pid]): into an existing scope.
int AttachToScope(sd_bus* bus, const std::string& unit, int pid, BusError& error) {
  auto m = NewManagerCall(bus, "AttachProcessesToUnit");
  if (!m.ok()) return -EINVAL;
  int r = sd_bus_message_append(m->get(), "ssau", unit.c_str(), "/", 1, static_cast<uint32_t>(pid));
  if (r < 0) return r;
  return sd_bus_call(bus, m->get(), kCallTimeoutUsec, &error.e, nullptr);
}

// The scope's start job runs after the call returned: wait until the
// kernel shows the pid in the unit's cgroup.
Status WaitInUnit(int pid, const std::string& unit) {
  auto deadline = std::chrono::steady_clock::now() + kJoinWait;
  for (;;) {
    auto cgroup = ReadProcCgroup(pid);
    if (!cgroup.ok()) return cgroup.status();
    if (ProcCgroupInUnit(*cgroup, unit)) return Status::Ok();
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::Unavailable("systemd accepted " + unit + " but pid " + std::to_string(pid) + " is still in " +
                                 *cgroup);
    }
    std::this_thread::sleep_for(kJoinPoll);
  }
}

// Blocking: runs on a pool thread.
Result<std::string> Move(const std::string& address, const std::string& volume_id, int pid) {
  std::string unit = ScopeUnitName(volume_id);
  auto bus = Connect(address);
  if (!bus.ok()) return bus.status();
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(kNameRetryDelay);
    BusError start_error;
    int r = StartScope(bus->get(), unit, volume_id, pid, start_error);
    if (r >= 0) break;
    if (!start_error.Is(kUnitExists)) return start_error.ToStatus(r, "start " + unit);
    BusError attach_error;
    r = AttachToScope(bus->get(), unit, pid, attach_error);
    if (r >= 0) break;
    if (attempt + 1 == kNameAttempts) return attach_error.ToStatus(r, unit + " exists; attach to it");
  }
  NBDK_RETURN_IF_ERROR(WaitInUnit(pid, unit));
  return unit;
}

}  // namespace

SystemdChildScopes::SystemdChildScopes(EventLoop& loop, std::string bus_address)
    : loop_(loop), bus_address_(std::move(bus_address)) {}

void SystemdChildScopes::MoveIntoScope(const std::string& volume_id, int pid,
                                       std::function<void(Result<std::string>)> done) {
  NBDK_CHECK_LOOP_THREAD(loop_);
  RunBlockingResult<std::string>(
      loop_, [address = bus_address_, volume_id, pid] { return Move(address, volume_id, pid); }, std::move(done));
}

}  // namespace nbdk
