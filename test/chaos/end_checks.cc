#include "test/chaos/end_checks.h"

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/command.h"
#include "test/common/vm_command.h"

namespace nbdk::chaos {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> MountPointsUnder(const std::string& root) {
  // mountinfo: id parent major:minor root mount-point ...
  std::vector<std::string> found;
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    std::stringstream fields(line);
    std::string id, parent, dev, fs_root, mount_point;
    fields >> id >> parent >> dev >> fs_root >> mount_point;
    if (mount_point.rfind(root + "/", 0) == 0) found.push_back(mount_point);
  }
  return found;
}

std::vector<std::string> FilesIn(const std::string& dir, bool skip_lock) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    if (!e.is_regular_file()) continue;
    if (skip_lock && e.path().filename() == "LOCK") continue;
    found.push_back(e.path());
  }
  return found;
}

}  // namespace

Status CheckFilesystem(const vmtest::VmCeph& ceph, const ChaosVolume& v) {
  if (v.access == Access::kBlock) return Status::Ok();
  auto rbd_nbd = vmtest::SpawnedChild::Spawn({"rbd-nbd", "-c", ceph.conf, "--id", ceph.user, "--keyfile", ceph.keyfile,
                                              "map", "-f", "--try-netlink", "--read-only", ceph.pool + "/" + v.id});
  if (!rbd_nbd.ok()) return rbd_nbd.status();
  auto device = rbd_nbd->ReadLine(std::chrono::seconds(60));
  if (!device.ok()) return device.status().WithContext("map " + v.id + " for fsck");
  std::vector<std::string> fsck = v.access == Access::kXfs ? std::vector<std::string>{"xfs_repair", "-n", *device}
                                                           : std::vector<std::string>{"e2fsck", "-fn", *device};
  auto checked = vmtest::RunCommand(fsck);
  auto unmapped = vmtest::RunCommand({"rbd-nbd", "unmap", *device});
  auto exited = rbd_nbd->Wait(std::chrono::seconds(60));
  if (!checked.ok()) return checked.status();
  if (checked->exit.code != 0) {
    return Status::Corruption(vmtest::JoinArgv(fsck) + " (" + v.id + "): " + checked->exit.ToString() + "\n" +
                              checked->stdout_text);
  }
  if (!unmapped.ok() || unmapped->exit.code != 0) return Status::Internal("rbd-nbd unmap " + *device + " failed");
  if (!exited.ok()) return exited.status();
  return Status::Ok();
}

std::vector<std::string> FindLeftovers(const vmtest::VmCeph& ceph, const std::vector<std::string>& images,
                                       const std::vector<std::string>& devices, const std::string& root,
                                       const std::string& key_dir, const std::string& journal_dir) {
  std::vector<std::string> left;
  for (const std::string& image : images) {
    for (pid_t pid : vmtest::RbdNbdProcessesFor(ceph, image)) {
      left.push_back("rbd-nbd pid " + std::to_string(pid) + " for " + image);
      ::kill(pid, SIGTERM);  // the VM is shared with the tests that follow
    }
  }
  for (const std::string& m : MountPointsUnder(root)) left.push_back("mount " + m);
  std::error_code ec;
  for (const std::string& dev : devices) {
    if (fs::exists("/sys/block/" + fs::path(dev).filename().string() + "/pid", ec)) {
      left.push_back(dev + " still connected");
    }
  }
  for (const std::string& f : FilesIn(key_dir, false)) left.push_back("key file " + f);
  for (const std::string& f : FilesIn(journal_dir, true)) left.push_back("journal file " + f);
  return left;
}

}  // namespace nbdk::chaos
