#include "host/device_users.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "base/join.h"
#include "base/kernel_file.h"
#include "host/process_scan.h"
#include "netlink/nbd_device.h"
#include "netlink/nbd_sysfs.h"

namespace nbdk {
namespace {

std::string Comm(const std::string& pid_dir) {
  auto comm = ReadKernelFile(pid_dir + "/comm", 64);
  if (!comm.ok()) return "";
  std::string name = *comm;
  while (!name.empty() && name.back() == '\n') name.pop_back();
  return name;
}

// Does the process in `pid_dir` have an fd on the block device `rdev`?
// ("." and "..", directories, are never that device.)
bool HasOpen(const std::string& pid_dir, dev_t rdev) {
  std::string fd_dir = pid_dir + "/fd";
  std::unique_ptr<DIR, int (*)(DIR*)> fds(::opendir(fd_dir.c_str()), ::closedir);
  if (!fds) return false;  // gone, or a kernel thread
  while (const dirent* e = ::readdir(fds.get())) {
    struct stat st {};
    if (::stat((fd_dir + "/" + e->d_name).c_str(), &st) != 0) continue;
    if (S_ISBLK(st.st_mode) && st.st_rdev == rdev) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> MountsOfDevice(const std::vector<MountEntry>& table, const std::string& device) {
  auto index = NbdDeviceIndex(device);
  std::string node = index.ok() ? "/" + NbdKernelName(*index) : "";  // devtmpfs's root for /dev/nbd3: "/nbd3"
  std::vector<std::string> out;
  for (const MountEntry& e : table) {
    if (e.source == device || (!node.empty() && e.fs_type == "devtmpfs" && e.root == node)) {
      out.push_back(e.mount_point);
    }
  }
  return out;
}

Result<std::vector<std::string>> DeviceOpeners(const std::string& device, const std::string& proc_root) {
  struct stat dev {};
  if (::stat(device.c_str(), &dev) != 0) return Status::FromErrno(errno, "stat " + device);
  if (!S_ISBLK(dev.st_mode)) return Status::FailedPrecondition(device + " is not a block device");
  const int self = ::getpid();
  std::vector<std::string> out;
  Status listed = ForEachProcess(proc_root, [&](int pid, const std::string& pid_dir) {
    if (pid == self || !HasOpen(pid_dir, dev.st_rdev)) return;
    std::string comm = Comm(pid_dir);
    if (comm == "rbd-nbd") return;
    out.push_back("pid " + std::to_string(pid) + " (" + (comm.empty() ? "?" : comm) + ")");
  });
  if (!listed.ok()) return listed;
  return out;
}

namespace {

Status CheckNoMounts(const std::string& device, const std::string& mountinfo_path) {
  auto table = ReadMountTable(mountinfo_path);
  if (!table.ok()) return table.status();
  std::string mounts = Join(MountsOfDevice(*table, device), ", ");
  if (mounts.empty()) return Status::Ok();
  return Status::FailedPrecondition(device + " is still mounted at " + mounts + "; unmount it before unstaging");
}

Status CheckNoHolders(const std::string& device, const std::string& sysfs_root) {
  // Only an nbd device has holders to list (the record of a stage cut short
  // before the map may name none).
  auto index = NbdDeviceIndex(device);
  if (!index.ok()) return Status::Ok();
  auto holders = ReadNbdHolders(*index, sysfs_root);
  if (!holders.ok()) return holders.status();
  std::string list = Join(*holders, ", ");
  if (list.empty()) return Status::Ok();
  return Status::FailedPrecondition(device + " is held by " + list + " (device-mapper or md); release it first");
}

Status CheckNoOpeners(const std::string& device, const std::string& proc_root) {
  auto openers = DeviceOpeners(device, proc_root);
  // No device node (a record whose map never happened): nobody has it open.
  if (!openers.ok() && openers.status().code() == Code::kNotFound) return Status::Ok();
  if (!openers.ok()) return openers.status().WithContext("who has " + device + " open");
  std::string list = Join(*openers, ", ");
  if (list.empty()) return Status::Ok();
  return Status::FailedPrecondition(device + " is open by " + list + "; close it before unstaging");
}

}  // namespace

Status CheckDeviceUnused(const std::string& device, const std::string& mountinfo_path, const std::string& sysfs_root,
                         const std::string& proc_root) {
  if (Status s = CheckNoMounts(device, mountinfo_path); !s.ok()) return s;
  if (Status s = CheckNoHolders(device, sysfs_root); !s.ok()) return s;
  return CheckNoOpeners(device, proc_root);
}

}  // namespace nbdk
