#include "csi/node/device_users.h"

#include "netlink/nbd_device.h"
#include "netlink/nbd_sysfs.h"

namespace nbdk {

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
  // Only an nbd device has holders to list (the record of a stage cut short
  // before the map may name none).
  auto index = NbdDeviceIndex(device);
  if (!index.ok()) return Status::Ok();
  auto holders = ReadNbdHolders(*index, sysfs_root);
  if (!holders.ok()) return holders.status();
  std::string list;
  for (const std::string& h : *holders) list += (list.empty() ? "" : ", ") + h;
  if (!list.empty()) {
    return Status::FailedPrecondition(device + " is held by " + list + " (device-mapper or md); release it first");
  }
  return Status::Ok();
}

}  // namespace nbdk
