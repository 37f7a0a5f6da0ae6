#include "csi/device_users.h"

#include <dirent.h>

#include <cerrno>
#include <memory>

namespace nbdk {

std::vector<std::string> MountsOfDevice(const std::vector<MountEntry>& table, const std::string& device) {
  std::string node = device.substr(device.rfind('/'));  // "/nbd3"
  std::vector<std::string> out;
  for (const MountEntry& e : table) {
    if (e.source == device || (e.fs_type == "devtmpfs" && e.root == node)) out.push_back(e.mount_point);
  }
  return out;
}

Status CheckDeviceUnused(const std::string& device, const std::string& mountinfo_path,
                         const std::string& sysfs_root) {
  auto table = ReadMountTable(mountinfo_path);
  if (!table.ok()) return table.status();
  std::vector<std::string> mounts = MountsOfDevice(*table, device);
  if (!mounts.empty()) {
    std::string list;
    for (const std::string& m : mounts) list += (list.empty() ? "" : ", ") + m;
    return Status::FailedPrecondition(device + " is still mounted at " + list + "; unmount it before unstaging");
  }
  std::string holders = sysfs_root + "/block" + device.substr(device.rfind('/')) + "/holders";
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(holders.c_str()), ::closedir);
  if (!dir) return errno == ENOENT ? Status::Ok() : Status::FromErrno(errno, "list " + holders);
  std::string list;
  while (dirent* e = ::readdir(dir.get())) {
    std::string name = e->d_name;
    if (name != "." && name != "..") list += (list.empty() ? "" : ", ") + name;
  }
  if (!list.empty()) {
    return Status::FailedPrecondition(device + " is held by " + list + " (device-mapper or md); release it first");
  }
  return Status::Ok();
}

}  // namespace nbdk
