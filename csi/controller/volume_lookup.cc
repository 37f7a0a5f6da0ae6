#include "csi/controller/volume_lookup.h"

#include "base/quote_field.h"
#include "ceph/omap_store.h"

namespace nbdk {

Result<FoundVolume> FindVolume(const std::shared_ptr<RadosCluster>& cluster, const VolumeRef& volume,
                               const std::string& ns, const JournalNames& names) {
  FoundVolume out;
  auto io = IoCtx::OpenById(cluster, volume.decoded.pool_id, ns);
  if (!io.ok() && io.status().code() == Code::kNotFound) return out;
  if (!io.ok()) return io.status().WithContext("volume " + QuoteField(volume.volume_id));
  out.image_pool.emplace(std::move(*io));
  RadosOmapStore volumes(*out.image_pool);
  auto attrs = ReadVolumeAttributes(volumes, volume.decoded.object_uuid, names);
  if (!attrs.ok()) return attrs.status().WithContext("volume " + QuoteField(volume.volume_id));
  out.attributes = std::move(*attrs);
  return out;
}

}  // namespace nbdk
