// ControllerService's snapshot RPCs (csi/controller/controller_service.h); the work is
// csi/controller/snapshot_operations.h's.
#include <set>

#include "csi/cluster_config.h"
#include "csi/controller/controller_service.h"
#include "csi/controller/snapshot_operations.h"
#include "csi/controller/snapshot_request.h"
#include "csi/locked_call.h"

namespace nbdk {
namespace {

void FillSnapshot(const SnapshotInfo& info, csi::v1::Snapshot* out) {
  out->set_snapshot_id(info.snapshot_id);
  out->set_source_volume_id(info.source_volume_id);
  out->set_size_bytes(info.size_bytes);
  out->mutable_creation_time()->set_seconds(info.created_s);
  out->mutable_creation_time()->set_nanos(info.created_ns);
  // The RBD snapshot exists when CreateSnapshot answers: nothing is copied
  // afterwards (a flatten, when due, is done before the answer).
  out->set_ready_to_use(true);
}

}  // namespace

struct ControllerService::SnapshotListing {
  ListSnapshotsParams params;
  std::vector<std::string> clusters;
  // "<fsid>/<namespace>" of every place listed: two config.json entries
  // naming one cluster and namespace (say, one with readAffinity and one
  // without) list its snapshots once, under the first entry's ID.
  std::set<std::string> places;
  std::vector<SnapshotInfo> found;
};

grpc::ServerUnaryReactor* ControllerService::CreateSnapshot(grpc::CallbackServerContext* c,
                                                            const csi::v1::CreateSnapshotRequest* r,
                                                            csi::v1::CreateSnapshotResponse* response) {
  return LockedCall<CreateSnapshotParams>(
      env_, c, "CreateSnapshot", r, ParseCreateSnapshotRequest,
      [this](const CreateSnapshotParams& p) {
        // The source's lock keeps DeleteVolume and a clone of it out meanwhile.
        return locks_.Lock(std::vector<std::string>{"snapshot name " + p.name, "volume " + p.source.volume_id});
      },
      [this, response](CreateSnapshotParams parsed, OpLocks::Guard guard, RpcDone done) {
        auto p = std::make_shared<CreateSnapshotParams>(std::move(parsed));
        auto held = std::make_shared<OpLocks::Guard>(std::move(guard));
        auto out = std::make_shared<SnapshotInfo>();
        auto work = [p, out, kms = ResolveKmsOnThisNode()](const std::shared_ptr<RadosCluster>& cluster,
                                                           const std::string& ns) {
          auto made = CreateSnapshotBlocking(cluster, *p, ns, kms);
          if (!made.ok()) return made.status();
          *out = std::move(*made);
          return Status::Ok();
        };
        OnCluster(p->source.decoded.cluster_id, "", p->source.secrets, work, [response, out, held, done](Status s) {
          if (s.ok()) FillSnapshot(*out, response->mutable_snapshot());
          done(s);
        });
      });
}

grpc::ServerUnaryReactor* ControllerService::DeleteSnapshot(grpc::CallbackServerContext* c,
                                                            const csi::v1::DeleteSnapshotRequest* r,
                                                            csi::v1::DeleteSnapshotResponse*) {
  return Dispatch(env_, c, "DeleteSnapshot", [this, r](RpcDone done) {
    auto parsed = ParseDeleteSnapshotRequest(*r);
    if (!parsed.ok()) return done(parsed.status());
    if (!*parsed) return done(Status::Ok());  // no snapshot of this driver has that ID
    auto lock = locks_.Lock("snapshot " + r->snapshot_id());
    if (!lock.ok()) return done(lock.status());
    auto guard = std::make_shared<OpLocks::Guard>(std::move(*lock));
    auto snapshot = std::make_shared<VolumeRef>(std::move(**parsed));
    OnCluster(
        snapshot->decoded.cluster_id, "", snapshot->secrets,
        [snapshot](const std::shared_ptr<RadosCluster>& cluster, const std::string& ns) {
          return DeleteSnapshotBlocking(cluster, *snapshot, ns);
        },
        [guard, done](Status s) { done(s); });
  });
}

void ControllerService::ListOnClusters(std::shared_ptr<SnapshotListing> listing, size_t next,
                                       std::function<void(Status)> done) {
  if (next == listing->clusters.size()) return done(Status::Ok());
  const std::string cluster_id = listing->clusters[next];
  auto found = std::make_shared<std::vector<SnapshotInfo>>();
  auto place = std::make_shared<std::string>();
  auto work = [listing, cluster_id, found, place](const std::shared_ptr<RadosCluster>& cluster, const std::string& ns) {
    *place = cluster->Fsid() + "/" + ns;
    auto list = ListSnapshotsBlocking(cluster, cluster_id, listing->params, ns);
    if (!list.ok()) return list.status();
    *found = std::move(*list);
    return Status::Ok();
  };
  OnCluster(cluster_id, "", listing->params.secrets, work, [this, listing, next, found, place, done](Status s) {
    if (!s.ok()) return done(s);
    if (listing->places.insert(*place).second)
      listing->found.insert(listing->found.end(), found->begin(), found->end());
    ListOnClusters(listing, next + 1, done);
  });
}

grpc::ServerUnaryReactor* ControllerService::ListSnapshots(grpc::CallbackServerContext* c,
                                                           const csi::v1::ListSnapshotsRequest* r,
                                                           csi::v1::ListSnapshotsResponse* response) {
  // Read-only: no op lock.
  return Dispatch(env_, c, "ListSnapshots", [this, r, response](RpcDone done) {
    auto parsed = ParseListSnapshotsRequest(*r);
    if (!parsed.ok()) return done(parsed.status());
    auto listing = std::make_shared<SnapshotListing>();
    listing->params = std::move(*parsed);
    // Pages are offsets into the sorted list of every match.
    auto answer = [listing, response, done](Status s) {
      if (!s.ok()) return done(s);
      const auto& all = listing->found;
      const size_t offset = listing->params.offset;
      if (offset > all.size()) {
        return done(Status::Aborted("starting_token " + std::to_string(offset) + " is past the " +
                                    std::to_string(all.size()) + " snapshots"));
      }
      size_t end = all.size();
      if (listing->params.max_entries > 0) end = std::min(end, offset + size_t(listing->params.max_entries));
      for (size_t i = offset; i < end; ++i) FillSnapshot(all[i], response->add_entries()->mutable_snapshot());
      if (end < all.size()) response->set_next_token(std::to_string(end));
      done(Status::Ok());
    };
    const ListSnapshotsParams& p = listing->params;
    if (p.matches_nothing) return answer(Status::Ok());
    if (p.snapshot_id || p.source_volume_id) {
      listing->clusters.push_back(p.snapshot_id ? p.snapshot_id->cluster_id : p.source_volume_id->cluster_id);
      return ListOnClusters(listing, 0, answer);
    }
    // No filter: every cluster of config.json (or the ceph.conf files).
    auto config = std::make_shared<Result<ClusterConfig>>(Status::Internal("not read"));
    env_.loop.RunBlocking([config, path = options_.clusters.cluster_config_path,
                           dir = options_.clusters.ceph_dir] { *config = LoadClusters(path, dir); },
                          [this, config, listing, answer] {
                            if (!config->ok()) return answer(config->status());
                            for (const auto& entry : (*config)->entries())
                              listing->clusters.push_back(entry.cluster_id);
                            ListOnClusters(listing, 0, answer);
                          },
                          Lane::kController);
  });
}

}  // namespace nbdk
