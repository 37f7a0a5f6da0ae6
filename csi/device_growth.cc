#include "csi/device_growth.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "daemon/base/log.h"
#include "journal/ceph/rados_cluster.h"
#include "journal/ceph/rbd_image.h"
#include "netlink/nbd_resize.h"
#include "netlink/nbd_sysfs.h"
#include "supervisor/rbd_nbd_argv.h"

namespace nbdk {
namespace {

Result<DeviceGrowth> GrowDeviceBlocking(const std::shared_ptr<RadosCluster>& cluster, const VolumeRecord& record) {
  auto io = IoCtx::Open(cluster, record.pool, record.rados_namespace);
  if (!io.ok()) return io.status();
  auto image = ImageSize(*io, record.image);
  if (!image.ok()) return image.status();
  if (!*image) return Status::NotFound("image " + record.image + " in " + io->description() + " no longer exists");
  auto device = BlockDeviceBytes(record.nbd_device);
  if (!device.ok()) return device.status();
  DeviceGrowth growth{**image, *device};
  if (growth.image_bytes <= growth.device_bytes) return growth;

  auto index = NbdDeviceIndex(record.nbd_device);
  if (!index.ok()) return index.status();
  // The identifier the kernel compares with is the one it holds: read it
  // rather than trust the journal's cookie.
  auto backend = ReadNbdBackendCookie(*index);
  if (!backend.ok() && backend.status().code() != Code::kNotFound) return backend.status();
  NBDK_RETURN_IF_ERROR(ResizeNbdDevice(*index, growth.image_bytes, backend.ok() ? *backend : std::string()));
  auto grown = BlockDeviceBytes(record.nbd_device);
  if (!grown.ok()) return grown.status();
  growth.device_bytes = *grown;
  NBDK_LOG_INFO("volume_device_grown",
                {{"volume", record.volume_id}, {"device", record.nbd_device}, {"bytes", growth.device_bytes}});
  return growth;
}

}  // namespace

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

void GrowDeviceToImage(NodeContext& node, const VolumeRecord& record, std::function<void(Result<DeviceGrowth>)> done) {
  NBDK_CHECK_LOOP_THREAD(node.loop);
  EventLoop* loop = &node.loop;
  node.rados.Get(RadosConfigForImage(RecordedImage(record), node.options.resolve.rados_timeout_s), [loop, record, done = std::move(done)](Result<std::shared_ptr<RadosCluster>> cluster) {
    if (!cluster.ok()) return done(cluster.status().WithContext("read the size of image " + record.image));
    auto out = std::make_shared<Result<DeviceGrowth>>(Status::Internal("not run"));
    loop->RunBlocking([out, cluster = *cluster, record] { *out = GrowDeviceBlocking(cluster, record); },
                      [out, done] { done(std::move(*out)); });
  });
}

}  // namespace nbdk
