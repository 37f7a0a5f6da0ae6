#include "csi/node/device_growth.h"

#include <memory>

#include "ceph/rados_cluster.h"
#include "ceph/rbd_image.h"

namespace nbdk {
namespace {

// BLOCKING. The size of `record`'s image; NotFound when it is gone.
Result<uint64_t> ImageBytes(const std::shared_ptr<RadosCluster>& cluster, const VolumeRecord& record) {
  auto io = IoCtx::Open(cluster, record.pool, record.rados_namespace);
  if (!io.ok()) return io.status();
  auto image = ImageSize(*io, record.image);
  if (!image.ok()) return image.status();
  if (!*image) return Status::NotFound("image " + record.image + " in " + io->description() + " no longer exists");
  return **image;
}

}  // namespace

void GrowDeviceToImage(NodeContext& node, const VolumeRecord& record, std::function<void(Result<DeviceGrowth>)> done) {
  NBDK_CHECK_LOOP_THREAD(node.loop);
  EventLoop* loop = &node.loop;
  Supervisor* supervisor = &node.supervisor;
  auto grow = [supervisor, record, done](uint64_t image_bytes) {
    supervisor->GrowDevice(record.volume_id, image_bytes, [image_bytes, done](Result<uint64_t> device) {
      if (!device.ok()) return done(device.status());
      done(DeviceGrowth{image_bytes, *device});
    });
  };
  RadosConfig config = RadosConfigForImage(RecordedImage(record), node.options.resolve.cluster.rados_timeout_s);
  node.rados.Get(config, [loop, record, grow, done](Result<std::shared_ptr<RadosCluster>> cluster) {
    if (!cluster.ok()) return done(cluster.status().WithContext("read the size of image " + record.image));
    auto image = std::make_shared<Result<uint64_t>>(Status::Internal("not run"));
    loop->RunBlocking([image, cluster = *cluster, record] { *image = ImageBytes(cluster, record); },
                      [image, grow, done] {
                        if (!image->ok()) return done(image->status());
                        grow(**image);
                      });
  });
}

}  // namespace nbdk
