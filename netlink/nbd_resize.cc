#include "netlink/nbd_resize.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/nbd-netlink.h>
#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/socket.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "base/log.h"
#include "netlink/genl_socket.h"
#include "netlink/nbd_device.h"
#include "netlink/nbd_genl_message.h"
#include "netlink/nbd_sysfs.h"

namespace nbdk {

Status ResizeNbdDevice(int index, uint64_t size_bytes, const std::string& backend) {
  const std::string device = NbdDevicePath(index);
  if (index < 0) return Status::InvalidArgument("nbd device index " + std::to_string(index) + " is negative");
  constexpr std::chrono::milliseconds kTimeout{5000};
  auto sock = ConnectGenlSocket(kTimeout);
  if (!sock.ok()) return sock.status().WithContext("resize " + device);
  int family = genl_ctrl_resolve(sock->get(), NBD_GENL_FAMILY_NAME);
  if (family < 0) {
    return Status::Unavailable("resize " + device + ": resolve generic netlink family 'nbd': " + nl_geterror(family));
  }
  uint32_t seq = nl_socket_use_seq(sock->get());
  auto request =
      BuildResizeRequest(static_cast<uint16_t>(family), seq, static_cast<uint32_t>(index), size_bytes, backend);
  if (!request.ok()) return request.status().WithContext("resize " + device);
  const std::string what = "nbd RECONFIGURE of " + device + " to " + std::to_string(size_bytes) + " bytes";
  auto replies = GenlExchange(sock->get(), *request, seq, what, kTimeout);
  if (!replies.ok()) return replies.status();
  NBDK_LOG_INFO("nbd_resized", {{"device", device}, {"bytes", size_bytes}});
  return Status::Ok();
}

Result<uint64_t> BlockDeviceBytes(const std::string& device) {
  int fd = ::open(device.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "open " + device);
  uint64_t bytes = 0;
  int rc = ::ioctl(fd, BLKGETSIZE64, &bytes);
  int err = errno;
  ::close(fd);
  if (rc != 0) return Status::FromErrno(err, "size of " + device);
  return bytes;
}

Result<NbdGrowth> GrowNbdDevice(const std::string& device, uint64_t size_bytes, const std::string& sysfs_root) {
  Result<uint64_t> before = BlockDeviceBytes(device);
  if (!before.ok()) return before.status();
  if (*before >= size_bytes) return NbdGrowth{*before, *before};
  Result<int> index = NbdDeviceIndex(device);
  if (!index.ok()) return index.status();
  Result<std::string> backend = ReadNbdBackendCookie(*index, sysfs_root);
  if (!backend.ok() && backend.status().code() != Code::kNotFound) return backend.status();
  NBDK_RETURN_IF_ERROR(ResizeNbdDevice(*index, size_bytes, backend.ok() ? *backend : std::string()));
  Result<uint64_t> after = BlockDeviceBytes(device);
  if (!after.ok()) return after.status();
  return NbdGrowth{*before, *after};
}

}  // namespace nbdk
