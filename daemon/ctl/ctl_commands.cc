#include "daemon/ctl/ctl_commands.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "base/quote_field.h"
#include "daemon/ctl/map_commands.h"
#include "daemon/ctl/volume_table.h"

namespace nbdk::ctl {
namespace {

int Fail(int exit, const std::string& message) { return FailWith(CtlError{exit, message}); }

int List(const DaemonClient& client, CtlOutput output) {
  auto status = client.GetStatus();
  if (!status.ok()) return Fail(kExitNotRunning, status.status().message());
  std::fputs(output == CtlOutput::kJson ? RenderJson(*status).c_str()
                                        : RenderTable(*status, ::isatty(STDOUT_FILENO) != 0).c_str(),
             stdout);
  return kExitOk;
}

volatile sig_atomic_t g_interrupted = 0;

int Watch(const DaemonClient& client) {
  ::signal(SIGINT, [](int) { g_interrupted = 1; });
  bool tty = ::isatty(STDOUT_FILENO) != 0;
  while (!g_interrupted) {
    auto status = client.GetStatus();
    if (tty) std::fputs("\033[H\033[2J", stdout);
    if (!status.ok()) {
      std::printf("nbdkeeperd unreachable: %s\n", BoundMessage(status.status().message()).c_str());
    } else {
      std::printf("nbdkeeperd %s  %s\n\n%s", status->version.c_str(), status->ready ? "ready" : "NOT READY",
                  RenderTable(*status, tty).c_str());
    }
    std::fflush(stdout);
    for (int i = 0; i < 10 && !g_interrupted; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return kExitOk;
}

int Health(const DaemonClient& client) {
  auto alive = client.Get("/healthz");
  if (!alive.ok() || alive->status != 200) return Fail(kExitNotRunning, "nbdkeeperd's health endpoint does not answer");
  auto status = client.GetStatus();
  if (!status.ok()) return Fail(kExitNotRunning, status.status().message());
  size_t connected = 0;
  for (const VolumeRow& v : status->volumes) connected += v.state == "Connected" ? 1 : 0;
  std::printf("nbdkeeperd %s: %s, %zu/%zu volumes connected\n", status->version.c_str(),
              status->ready ? "ready" : "not ready", connected, status->volumes.size());
  return status->ready && connected == status->volumes.size() ? kExitOk : kExitNotHealthy;
}

int Logs(const DaemonClient& client, const Config& daemon, const std::string& key) {
  auto status = client.GetStatus();
  if (!status.ok()) return Fail(kExitNotRunning, status.status().message());
  const VolumeRow* v = FindVolume(*status, key);
  if (v == nullptr) return Fail(kExitNotFound, "no volume " + QuoteField(key) + " (see nbdkeeperctl list)");
  std::string path = v->log.empty() ? daemon.state_dir + "/logs/" + v->volume_id + ".log" : v->log;
  std::ifstream in(path);
  if (!in) return Fail(kExitNotFound, "no rbd-nbd log for " + v->volume_id + " at " + path);
  std::printf("%s", std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()).c_str());
  return kExitOk;
}

int Expand(MapOperations& ops, const DaemonClient& client, const CtlCommand& c) {
  auto status = client.GetStatus();
  if (!status.ok()) return Fail(kExitNotRunning, status.status().message());
  const VolumeRow* v = FindVolume(*status, c.target);
  if (v == nullptr) {
    return Fail(kExitNotFound, "no volume " + QuoteField(c.target) + " is mapped (see nbdkeeperctl list)");
  }
  auto bytes = ops.Expand(*v, c.size_bytes, c.map);
  if (!bytes.ok()) return FailWith(ops.last_error());
  std::printf("%s: %lld bytes\n", v->image.c_str(), static_cast<long long>(*bytes));
  return kExitOk;
}

}  // namespace

void PrintError(std::string_view message) { std::fprintf(stderr, "nbdkeeperctl: %s\n", BoundMessage(message).c_str()); }

int FailWith(const CtlError& error) {
  PrintError(error.message);
  return error.exit;
}

int RunCtlCommand(const CtlCommand& c) {
  auto daemon = DaemonSettings(c.global);
  if (!daemon.ok()) return Fail(kExitUsage, daemon.status().message());
  CtlError error;
  auto client = DaemonClient::Open(*daemon, &error);
  if (!client.ok()) return FailWith(error);
  MapOperations ops(*client, *daemon);
  MapContext ctx{ops, *client, *daemon, HostRoots{}};
  switch (c.action) {
    case CtlAction::kMap:
      return MapCommand(ctx, c);
    case CtlAction::kUnmap:
      return UnmapCommand(ctx, c);
    case CtlAction::kUnmapAll:
      return UnmapAllCommand(ctx, c);
    case CtlAction::kApply:
      return ApplyCommand(ctx, c);
    case CtlAction::kExpand:
      return Expand(ops, *client, c);
    case CtlAction::kList:
      return List(*client, c.output);
    case CtlAction::kWatch:
      return Watch(*client);
    case CtlAction::kLogs:
      return Logs(*client, *daemon, c.target);
    case CtlAction::kHealth:
      return Health(*client);
    case CtlAction::kHelp:
    case CtlAction::kVersion:
      break;
  }
  return kExitUsage;
}

}  // namespace nbdk::ctl
