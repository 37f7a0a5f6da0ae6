#include "csi/node/image_resolver.h"

#include <memory>

#include "ceph/omap_volume_keys.h"
#include "csi/cluster_config.h"

namespace nbdk {
namespace {

struct Resolution {
  ResolveOptions options;
  StageRequest request;
  ResolvedImage out;
  std::function<void(Result<ResolvedImage>)> done;
};

// Pool name and image name from the cluster. BLOCKING.
Status LookUpInCluster(const std::shared_ptr<RadosCluster>& cluster, Resolution& r) {
  const VolumeId& id = *r.request.decoded_id;
  if (r.out.image.pool.empty()) {
    auto pool = cluster->PoolName(id.pool_id);
    if (!pool.ok()) return pool.status().WithContext("volume " + r.request.volume_id + ": image pool");
    r.out.image.pool = *pool;
  }
  if (!r.out.image.image.empty()) return Status::Ok();
  std::string journal_pool = r.request.journal_pool.empty() ? r.out.image.pool : r.request.journal_pool;
  auto io = IoCtx::Open(cluster, journal_pool, r.out.image.rados_namespace);
  if (!io.ok()) return io.status().WithContext("volume " + r.request.volume_id + ": journal pool");
  std::string object = VolumeObject(id.object_uuid);
  auto keys = OmapGet(*io, object, {kImageNameKey});
  if (!keys.ok()) {
    return keys.status().WithContext("volume " + r.request.volume_id + ": omap journal object " + object + " in " +
                                     io->description());
  }
  auto it = keys->find(kImageNameKey);
  r.out.image.image = it == keys->end() ? DefaultImageName(id.object_uuid) : it->second;
  return Status::Ok();
}

}  // namespace

void ResolveImage(EventLoop& loop, RadosClients& rados, const ResolveOptions& options, const StageRequest& request,
                  const std::string& keyfile, std::function<void(Result<ResolvedImage>)> done) {
  NBDK_CHECK_LOOP_THREAD(loop);
  auto r = std::make_shared<Resolution>();
  r->options = options;
  r->request = request;
  r->done = std::move(done);
  auto config = std::make_shared<Result<ClusterConfig>>(Status::Internal("not read"));
  RadosClients* clients = &rados;
  EventLoop* l = &loop;
  const ClusterSource& source = options.cluster;
  auto load = [path = source.cluster_config_path, dir = source.ceph_dir, config] { *config = LoadClusters(path, dir); };
  loop.RunBlocking(load, [=] {
    if (!config->ok()) return r->done(config->status());
    auto entry = (*config)->Find(r->request.cluster_id);
    if (!entry.ok()) return r->done(entry.status());
    ImageSpec& image = r->out.image;
    r->out.cluster_id = entry->cluster_id;
    image.monitors = entry->monitors;
    image.ceph_conf = entry->CephConfOr(r->options.cluster.ceph_conf);
    image.user_id = r->request.user_id;
    image.keyfile = keyfile;
    image.rados_namespace = r->request.rados_namespace.empty() ? entry->rados_namespace : r->request.rados_namespace;
    image.pool = r->request.pool;
    image.image = r->request.image_name;
    image.snap = r->request.snapshot;
    if (entry->read_affinity) {
      const auto& labels =
          entry->crush_location_labels.empty() ? r->options.crush_location_labels : entry->crush_location_labels;
      r->out.read_affinity = ReadAffinityMapOptions(CrushLocation(labels, r->options.node_labels));
    }
    if (r->request.static_volume || (!image.pool.empty() && !image.image.empty())) {
      return r->done(std::move(r->out));
    }
    RadosConfig config = RadosConfigForImage(image, r->options.cluster.rados_timeout_s);
    clients->Get(config, [l, r](Result<std::shared_ptr<RadosCluster>> cluster) {
      if (!cluster.ok()) return r->done(cluster.status());
      auto status = std::make_shared<Status>();
      l->RunBlocking([r, cluster = *cluster, status] { *status = LookUpInCluster(cluster, *r); },
                     [r, status] {
                       if (!status->ok()) return r->done(*status);
                       r->done(std::move(r->out));
                     });
    });
  });
}

}  // namespace nbdk
