#include "daemon/ctl/foreign_mappings.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "host/process_scan.h"
#include "netlink/nbd_device.h"

namespace nbdk::ctl {
namespace {

std::string ReadLine(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::vector<ForeignMapping> KrbdMappings(const MapSpec& spec, const std::string& sysfs) {
  std::vector<ForeignMapping> out;
  std::error_code ec;
  for (const auto& dev : std::filesystem::directory_iterator(sysfs + "/bus/rbd/devices", ec)) {
    const auto& dir = dev.path();
    std::string snap = ReadLine(dir / "current_snap");
    // pool_ns is missing on kernels before 4.19: the default namespace.
    if (ReadLine(dir / "pool") != spec.pool || ReadLine(dir / "name") != spec.image ||
        ReadLine(dir / "pool_ns") != spec.rados_namespace || (snap == "-" ? "" : snap) != spec.snap) {
      continue;
    }
    out.push_back({"/dev/rbd" + dir.filename().string(), "krbd"});
  }
  return out;
}

// Whether rbd-nbd's argv names `spec`: rbd and nbdkeeper pass the full
// "pool/[ns/]image[@snap]"; a hand-run rbd-nbd may give a bare image of
// the pool "rbd" after its command.
bool NamesImage(const std::vector<std::string>& argv, const MapSpec& spec) {
  const std::string full = spec.Spec();
  bool bare_ok = spec.pool == "rbd" && spec.rados_namespace.empty();
  std::string bare = spec.image + (spec.snap.empty() ? "" : "@" + spec.snap);
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == full) return true;
    if (bare_ok && argv[i] == bare && (argv[i - 1] == "map" || argv[i - 1] == "attach")) return true;
  }
  return false;
}

// The nbd device `pid` connected (sysfs keeps the connecting pid).
std::string NbdDeviceOf(int pid, const std::vector<std::string>& argv, const std::string& sysfs) {
  auto device = std::find(argv.begin(), argv.end(), "--device");
  if (device != argv.end() && device + 1 != argv.end()) return *(device + 1);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(sysfs + "/block", ec)) {
    auto index = NbdKernelNameIndex(entry.path().filename().string());
    if (!index.ok()) continue;
    auto owner = ReadNbdPid(*index, sysfs);
    if (owner.ok() && *owner == pid) return NbdDevicePath(*index);
  }
  return "";
}

}  // namespace

std::vector<ForeignMapping> ForeignMappings(const MapSpec& spec, const std::vector<int>& supervised,
                                            const HostRoots& roots) {
  std::vector<ForeignMapping> out = KrbdMappings(spec, roots.sysfs);
  auto processes = ScanRbdNbdProcesses(roots.proc);
  if (!processes.ok()) return out;
  for (const RbdNbdProcess& p : *processes) {
    if (std::find(supervised.begin(), supervised.end(), p.pid) != supervised.end()) continue;
    if (!NamesImage(p.argv, spec)) continue;
    out.push_back({NbdDeviceOf(p.pid, p.argv, roots.sysfs), "rbd-nbd pid " + std::to_string(p.pid)});
  }
  return out;
}

std::string RefusalFor(const MapSpec& spec, const std::vector<ForeignMapping>& found) {
  std::string out = spec.Spec() + " is already mapped on this host";
  std::string first_device;
  for (size_t i = 0; i < found.size(); ++i) {
    const ForeignMapping& f = found[i];
    out += std::string(i == 0 ? "" : ",") + " through " + f.by + (f.device.empty() ? "" : " as " + f.device);
    if (first_device.empty()) first_device = f.device;
  }
  return out + " (unmap it first" + (first_device.empty() ? "" : ": rbd device unmap " + first_device) + ")";
}

}  // namespace nbdk::ctl
