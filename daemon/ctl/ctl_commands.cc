#include "daemon/ctl/ctl_commands.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "csi/cluster_config.h"
#include "base/quote_field.h"
#include "daemon/ctl/map_operations.h"
#include "daemon/ctl/persisted_volumes.h"
#include "daemon/ctl/volume_table.h"

namespace nbdk::ctl {
namespace {

using Clock = std::chrono::steady_clock;

int Fail(const CtlError& e) {
  PrintError(e.message);
  return e.exit;
}

int Fail(int exit, const std::string& message) { return Fail(CtlError{exit, message}); }

Result<DaemonStatus> FetchStatus(const DaemonClient& client) {
  auto page = client.Get("/status");
  if (!page.ok()) return page.status();
  if (page->status != 200) return Status::Unavailable("/status answered HTTP " + std::to_string(page->status));
  return ParseDaemonStatus(page->body);
}

int List(const DaemonClient& client, bool json) {
  auto status = FetchStatus(client);
  if (!status.ok()) return Fail(kExitNotRunning, status.status().message());
  std::fputs(json ? RenderJson(*status).c_str() : RenderTable(*status, ::isatty(STDOUT_FILENO) != 0).c_str(), stdout);
  return kExitOk;
}

volatile sig_atomic_t g_interrupted = 0;

int Watch(const DaemonClient& client) {
  ::signal(SIGINT, [](int) { g_interrupted = 1; });
  bool tty = ::isatty(STDOUT_FILENO) != 0;
  while (!g_interrupted) {
    auto status = FetchStatus(client);
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
  auto status = FetchStatus(client);
  if (!status.ok()) return Fail(kExitNotRunning, status.status().message());
  size_t connected = 0;
  for (const VolumeRow& v : status->volumes) connected += v.state == "Connected" ? 1 : 0;
  std::printf("nbdkeeperd %s: %s, %zu/%zu volumes connected\n", status->version.c_str(),
              status->ready ? "ready" : "not ready", connected, status->volumes.size());
  return status->ready && connected == status->volumes.size() ? kExitOk : kExitNotHealthy;
}

int Logs(const DaemonClient& client, const Config& daemon, const std::string& key) {
  auto status = FetchStatus(client);
  if (!status.ok()) return Fail(kExitNotRunning, status.status().message());
  const VolumeRow* v = FindVolume(*status, key);
  if (v == nullptr) return Fail(kExitNotFound, "no volume " + QuoteField(key) + " (see nbdkeeperctl list)");
  std::string path = v->log.empty() ? daemon.state_dir + "/logs/" + v->volume_id + ".log" : v->log;
  std::ifstream in(path);
  if (!in) return Fail(kExitNotFound, "no rbd-nbd log for " + v->volume_id + " at " + path);
  std::printf("%s", std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()).c_str());
  return kExitOk;
}

// The cluster to use: --cluster, else the only one in the daemon's config.
Result<std::string> ClusterFor(const MapSpec& spec, const Config& daemon) {
  if (!spec.cluster_id.empty()) return spec.cluster_id;
  auto clusters = LoadClusterConfig(daemon.ceph_csi_config);
  if (!clusters.ok()) return clusters.status();
  if (clusters->entries().size() != 1) {
    return Status::InvalidArgument(daemon.ceph_csi_config + " lists " + std::to_string(clusters->entries().size()) +
                                   " clusters: name one with --cluster");
  }
  return clusters->entries().front().cluster_id;
}

int Map(MapOperations& ops, const Config& daemon, CtlCommand command, const std::string& persist_file) {
  auto cluster = ClusterFor(command.map, daemon);
  if (!cluster.ok()) return Fail(kExitUsage, cluster.status().message());
  command.map.cluster_id = *cluster;
  auto mapped = ops.Map(command.map);
  if (!mapped.ok()) return Fail(ops.last_error());
  std::printf("%s: %s%s%s\n", command.map.Spec().c_str(), mapped->device.c_str(),
              mapped->mount_point.empty() ? "" : " mounted at ", mapped->mount_point.c_str());
  if (!command.persist) return kExitOk;
  auto persisted = LoadPersisted(persist_file);
  if (!persisted.ok()) return Fail(kExitFailed, persisted.status().message());
  std::erase_if(*persisted, [&](const PersistedVolume& p) { return p.volume_id == mapped->volume_id; });
  persisted->push_back({command.map, mapped->volume_id});
  if (Status s = SavePersisted(persist_file, *persisted); !s.ok()) return Fail(kExitFailed, s.message());
  std::printf("persisted in %s\n", persist_file.c_str());
  return kExitOk;
}

int Unmap(MapOperations& ops, const DaemonClient& client, const std::string& key, const std::string& persist_file) {
  auto status = FetchStatus(client);
  if (!status.ok()) return Fail(kExitNotRunning, status.status().message());
  const VolumeRow* v = FindVolume(*status, key);
  if (v == nullptr) return Fail(kExitNotFound, "no volume " + QuoteField(key) + " is mapped (see nbdkeeperctl list)");
  if (!ops.Unmap(*v).ok()) return Fail(ops.last_error());
  auto persisted = LoadPersisted(persist_file);
  if (persisted.ok() && std::erase_if(*persisted, [&](const PersistedVolume& p) { return p.volume_id == v->volume_id; })) {
    if (Status s = SavePersisted(persist_file, *persisted); !s.ok()) return Fail(kExitFailed, s.message());
  }
  std::printf("%s: unmapped\n", v->image.c_str());
  return kExitOk;
}

int Expand(MapOperations& ops, const DaemonClient& client, const CtlCommand& c) {
  auto status = FetchStatus(client);
  if (!status.ok()) return Fail(kExitNotRunning, status.status().message());
  const VolumeRow* v = FindVolume(*status, c.target);
  if (v == nullptr) {
    return Fail(kExitNotFound, "no volume " + QuoteField(c.target) + " is mapped (see nbdkeeperctl list)");
  }
  auto bytes = ops.Expand(*v, c.size_bytes, c.map);
  if (!bytes.ok()) return Fail(ops.last_error());
  std::printf("%s: %lld bytes\n", v->image.c_str(), static_cast<long long>(*bytes));
  return kExitOk;
}

// Maps every persisted volume that is not mapped; publishes again the ones
// that are (idempotent). Prints each volume's time and the total.
int Apply(MapOperations& ops, const DaemonClient& client, const Config& daemon, const std::string& persist_file) {
  auto start = Clock::now();
  auto persisted = LoadPersisted(persist_file);
  if (!persisted.ok()) return Fail(kExitFailed, persisted.status().message());
  if (!client.WaitReady(120000)) return Fail(kExitNotRunning, "nbdkeeperd did not become ready within 120 s");
  int failures = 0;
  for (PersistedVolume& p : *persisted) {
    auto t0 = Clock::now();
    auto cluster = ClusterFor(p.spec, daemon);
    if (!cluster.ok()) {
      PrintError(p.spec.Spec() + ": " + cluster.status().message());
      ++failures;
      continue;
    }
    p.spec.cluster_id = *cluster;
    auto mapped = ops.MapPersisted(p.spec, p.volume_id);
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (!mapped.ok()) {
      PrintError(ops.last_error().message);
      ++failures;
      continue;
    }
    std::printf("%s: %s%s%s (%.0f ms)\n", p.spec.Spec().c_str(), mapped->device.c_str(),
                mapped->mount_point.empty() ? "" : " mounted at ", mapped->mount_point.c_str(), ms);
  }
  std::printf("applied %zu persisted volume(s) in %.0f ms, %d failed\n", persisted->size(),
              std::chrono::duration<double, std::milli>(Clock::now() - start).count(), failures);
  return failures == 0 ? kExitOk : kExitFailed;
}

}  // namespace

void PrintError(std::string_view message) {
  std::fprintf(stderr, "nbdkeeperctl: %s\n", BoundMessage(message).c_str());
}

int RunCtlCommand(const CtlCommand& c) {
  auto daemon = DaemonSettings(c.global);
  if (!daemon.ok()) return Fail(kExitUsage, daemon.status().message());
  CtlError error;
  auto client = DaemonClient::Open(*daemon, &error);
  if (!client.ok()) return Fail(error);
  MapOperations ops(*client, *daemon);
  switch (c.action) {
    case CtlAction::kMap: return Map(ops, *daemon, c, c.global.persist_file);
    case CtlAction::kUnmap: return Unmap(ops, *client, c.target, c.global.persist_file);
    case CtlAction::kExpand: return Expand(ops, *client, c);
    case CtlAction::kList: return List(*client, c.json);
    case CtlAction::kWatch: return Watch(*client);
    case CtlAction::kLogs: return Logs(*client, *daemon, c.target);
    case CtlAction::kHealth: return Health(*client);
    case CtlAction::kApply: return Apply(ops, *client, *daemon, c.global.persist_file);
    case CtlAction::kHelp:
    case CtlAction::kVersion: break;
  }
  return kExitUsage;
}

}  // namespace nbdk::ctl
