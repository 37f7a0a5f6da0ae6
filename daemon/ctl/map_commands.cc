#include "daemon/ctl/map_commands.h"

#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "base/json_writer.h"
#include "base/quote_field.h"
#include "daemon/ctl/ctl_commands.h"
#include "daemon/ctl/persisted_volumes.h"
#include "host/device_users.h"
#include "host/mount_table.h"

namespace nbdk::ctl {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// The image must not be mapped on this host outside nbdkeeper.
Status RefuseForeign(const MapContext& ctx, const MapSpec& spec) {
  auto status = ctx.client.GetStatus();
  if (!status.ok()) return status.status();
  std::vector<int> supervised;
  for (const VolumeRow& v : status->volumes) {
    if (v.pid > 0) supervised.push_back(v.pid);
  }
  std::vector<ForeignMapping> found = ForeignMappings(spec, supervised, ctx.roots);
  if (found.empty()) return Status::Ok();
  return Status::FailedPrecondition(RefusalFor(spec, found));
}

// Cluster, foreign mappings, then the CSI calls.
Result<MappedVolume> MapOne(MapContext& ctx, const MapSpec& spec, const std::string& volume_id, CtlError* error) {
  auto cluster = ChooseCluster(ctx.daemon.ceph_csi_config, ctx.daemon.ceph_dir, spec.cluster);
  if (!cluster.ok()) {
    *error = {kExitUsage, spec.Spec() + ": " + cluster.status().message()};
    return cluster.status();
  }
  if (Status s = RefuseForeign(ctx, spec); !s.ok()) {
    *error = {s.code() == Code::kFailedPrecondition ? kExitFailed : kExitNotRunning, s.message()};
    return s;
  }
  auto mapped = volume_id.empty() ? ctx.ops.Map(spec, *cluster) : ctx.ops.MapPersisted(spec, *cluster, volume_id);
  if (!mapped.ok()) *error = ctx.ops.last_error();
  return mapped;
}

std::string MapJson(const MapSpec& spec, const MappedVolume& m, const std::string& persisted_in) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  WriteJsonMember(w, "volume", m.volume_id);
  WriteJsonMember(w, "spec", spec.Spec());
  WriteJsonMember(w, "pool", spec.pool);
  WriteJsonMember(w, "namespace", spec.rados_namespace);
  WriteJsonMember(w, "image", spec.image);
  WriteJsonMember(w, "snap", spec.snap.empty() ? "-" : spec.snap);
  WriteJsonMember(w, "device", m.device);
  WriteJsonMember(w, "link", m.link);
  WriteJsonMember(w, "mount_point", m.mount_point);
  WriteJsonMember(w, "persisted_in", persisted_in);
  w.EndObject();
  return JsonText(buf) + "\n";
}

// Unmounts the mounts of `v`'s device that nbdkeeper did not make (its
// staging mount and targets), so that the daemon's unstage may proceed.
Status UnmountOthers(const VolumeRow& v, const HostRoots& roots) {
  if (v.device.empty()) return Status::Ok();
  auto table = ReadMountTable(roots.proc + "/self/mountinfo");
  if (!table.ok()) return table.status();
  for (const std::string& m : MountsOfDevice(*table, v.device)) {
    bool ours = m.starts_with(v.staging_path + "/") || m == v.staging_path ||
                std::find(v.targets.begin(), v.targets.end(), m) != v.targets.end();
    if (ours) continue;
    if (::umount2(m.c_str(), 0) != 0) return Status::FromErrno(errno, "unmount " + m + " (of " + v.device + ")");
    std::fprintf(stderr, "nbdkeeperctl: unmounted %s (of %s)\n", m.c_str(), v.device.c_str());
  }
  return Status::Ok();
}

Status UnmapRow(MapContext& ctx, const VolumeRow& v, bool force, CtlError* error) {
  if (force) {
    if (Status s = UnmountOthers(v, ctx.roots); !s.ok()) {
      *error = {kExitFailed, s.message()};
      return s;
    }
  }
  Status s = ctx.ops.Unmap(v);
  if (!s.ok()) *error = ctx.ops.last_error();
  return s;
}

}  // namespace

int MapCommand(MapContext& ctx, const CtlCommand& c) {
  CtlError error;
  auto mapped = MapOne(ctx, c.map, "", &error);
  if (!mapped.ok()) return FailWith(error);
  std::string persisted_in;
  if (c.persist) {
    const std::string& file = c.global.persist_file;
    auto persisted = LoadPersisted(file);
    if (!persisted.ok()) return FailWith({kExitFailed, persisted.status().message()});
    std::erase_if(*persisted, [&](const PersistedVolume& p) { return p.volume_id == mapped->volume_id; });
    persisted->push_back({c.map, mapped->volume_id});
    if (Status s = SavePersisted(file, *persisted); !s.ok()) return FailWith({kExitFailed, s.message()});
    persisted_in = file;
  }
  if (c.output == CtlOutput::kJson) {
    std::fputs(MapJson(c.map, *mapped, persisted_in).c_str(), stdout);
  } else if (c.output == CtlOutput::kQuiet || ::isatty(STDOUT_FILENO) == 0) {
    std::printf("%s\n", mapped->device.c_str());
  } else {
    std::printf("%s: %s%s%s\n", c.map.Spec().c_str(), mapped->device.c_str(),
                mapped->mount_point.empty() ? "" : " mounted at ", mapped->mount_point.c_str());
    if (!persisted_in.empty()) std::printf("persisted in %s\n", persisted_in.c_str());
  }
  return kExitOk;
}

int UnmapCommand(MapContext& ctx, const CtlCommand& c) {
  auto status = ctx.client.GetStatus();
  if (!status.ok()) return FailWith({kExitNotRunning, status.status().message()});
  const VolumeRow* v = FindVolume(*status, c.target);
  if (v == nullptr) {
    return FailWith({kExitNotFound, "no volume " + QuoteField(c.target) + " is mapped (see nbdkeeperctl list)"});
  }
  CtlError error;
  if (!UnmapRow(ctx, *v, c.force, &error).ok()) return FailWith(error);
  const std::string& file = c.global.persist_file;
  auto persisted = LoadPersisted(file);
  if (persisted.ok() &&
      std::erase_if(*persisted, [&](const PersistedVolume& p) { return p.volume_id == v->volume_id; })) {
    if (Status s = SavePersisted(file, *persisted); !s.ok()) return FailWith({kExitFailed, s.message()});
  }
  std::printf("%s: unmapped\n", v->Spec().c_str());
  return kExitOk;
}

int UnmapAllCommand(MapContext& ctx, const CtlCommand& c) {
  auto start = Clock::now();
  auto status = ctx.client.GetStatus();
  if (!status.ok()) return FailWith({kExitNotRunning, status.status().message()});
  // Persisted volumes last-mapped-first, then the rest newest-first.
  std::vector<const VolumeRow*> order;
  auto persisted = LoadPersisted(c.global.persist_file);
  if (!persisted.ok() && c.persisted_only) return FailWith({kExitFailed, persisted.status().message()});
  if (!persisted.ok()) PrintError(persisted.status().message() + " (unmapping in the daemon's order)");
  if (persisted.ok()) {
    for (auto p = persisted->rbegin(); p != persisted->rend(); ++p) {
      for (const VolumeRow& v : status->volumes) {
        if (v.volume_id == p->volume_id) order.push_back(&v);
      }
    }
  }
  for (auto v = status->volumes.rbegin(); v != status->volumes.rend() && !c.persisted_only; ++v) {
    if (std::find(order.begin(), order.end(), &*v) == order.end()) order.push_back(&*v);
  }
  int failures = 0;
  for (const VolumeRow* v : order) {
    auto t0 = Clock::now();
    CtlError error;
    if (!UnmapRow(ctx, *v, c.force, &error).ok()) {
      PrintError(v->Spec() + ": " + error.message);
      ++failures;
      continue;
    }
    std::printf("%s: unmounted and unmapped %s (%.0f ms)\n", v->Spec().c_str(), v->device.c_str(), MsSince(t0));
    std::fflush(stdout);
  }
  std::printf("unmapped %zu volume(s) in %.0f ms, %d failed\n", order.size() - static_cast<size_t>(failures),
              MsSince(start), failures);
  return failures == 0 ? kExitOk : kExitFailed;
}

int ApplyCommand(MapContext& ctx, const CtlCommand& c) {
  auto start = Clock::now();
  auto persisted = LoadPersisted(c.global.persist_file);
  if (!persisted.ok()) return FailWith({kExitFailed, persisted.status().message()});
  if (!ctx.client.WaitReady(120000)) return FailWith({kExitNotRunning, "nbdkeeperd did not become ready within 120 s"});
  int failures = 0;
  for (const PersistedVolume& p : *persisted) {
    auto t0 = Clock::now();
    CtlError error;
    auto mapped = MapOne(ctx, p.spec, p.volume_id, &error);
    if (!mapped.ok()) {
      PrintError(error.message);
      ++failures;
      continue;
    }
    std::printf("%s: %s%s%s (%.0f ms)\n", p.spec.Spec().c_str(), mapped->device.c_str(),
                mapped->mount_point.empty() ? "" : " mounted at ", mapped->mount_point.c_str(), MsSince(t0));
    std::fflush(stdout);
  }
  std::printf("applied %zu persisted volume(s) in %.0f ms, %d failed\n", persisted->size(), MsSince(start), failures);
  return failures == 0 ? kExitOk : kExitFailed;
}

}  // namespace nbdk::ctl
