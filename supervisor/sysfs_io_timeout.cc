#include "supervisor/sysfs_io_timeout.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "netlink/nbd_device.h"
#include "netlink/nbd_sysfs.h"

namespace nbdk {

Result<std::string> IoTimeoutPath(const std::string& sysfs_root, const std::string& device) {
  auto index = NbdDeviceIndex(device);
  if (!index.ok()) return index.status();
  return NbdSysfsFile(*index, sysfs_root, "queue/io_timeout");
}

void WriteIoTimeout(EventLoop& loop, const std::string& sysfs_root, const std::string& device, uint32_t timeout_ms,
                    std::function<void(Status)> done) {
  auto path = IoTimeoutPath(sysfs_root, device);
  if (!path.ok()) {
    done(path.status());
    return;
  }
  auto result = std::make_shared<Status>();
  loop.RunBlocking(
      [path = *path, timeout_ms, result] {
        // No O_CREAT: a missing attribute means no such device (or kernel).
        // O_TRUNC is a no-op on sysfs and keeps a plain test file exact.
        int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
        if (fd < 0) {
          *result = Status::FromErrno(errno, "open " + path);
          return;
        }
        std::string text = std::to_string(timeout_ms) + "\n";
        if (write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
          *result = Status::FromErrno(errno, "write " + path);
        }
        close(fd);
      },
      [result, done = std::move(done)] { done(*result); });
}

}  // namespace nbdk
