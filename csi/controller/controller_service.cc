#include "csi/controller/controller_service.h"

#include "csi/cluster_config.h"
#include "csi/controller/controller_operations.h"
#include "csi/controller/controller_request.h"
#include "csi/key_file.h"
#include "csi/locked_call.h"

namespace nbdk {

ControllerService::ControllerService(RpcEnv env, RadosClients& rados, ControllerOptions options)
    : SelfParsingService(env, "csi.v1.Controller"), env_(env), rados_(rados), options_(std::move(options)) {
  ParseItself("CreateVolume", &ControllerService::CreateVolume);
  ParseItself("DeleteVolume", &ControllerService::DeleteVolume);
  ParseItself("ControllerExpandVolume", &ControllerService::ControllerExpandVolume);
  ParseItself("ValidateVolumeCapabilities", &ControllerService::ValidateVolumeCapabilities);
  ParseItself("CreateSnapshot", &ControllerService::CreateSnapshot);
  ParseItself("DeleteSnapshot", &ControllerService::DeleteSnapshot);
  ParseItself("ListSnapshots", &ControllerService::ListSnapshots);
  ParseItself("ControllerGetCapabilities", &ControllerService::ControllerGetCapabilities);
}

KmsResolver ControllerService::ResolveKmsOnThisNode() const {
  return [path = options_.kms_config_path](std::string_view kms_id) { return ResolveKms(kms_id, path); };
}

void ControllerService::OnCluster(const std::string& cluster_id, const std::string& ns,
                                  const ControllerSecrets& secrets, ClusterWork work,
                                  std::function<void(Status)> done) {
  struct Call {
    Result<ClusterConfig> config = Status::Internal("not read");
    Result<std::string> keyfile = Status::Internal("not written");
    Status status;
  };
  auto call = std::make_shared<Call>();
  EventLoop& loop = env_.loop;
  // Runs last in every path: the key must not outlive the call.
  auto finish = [&loop, call, done](Status s) {
    loop.RunBlocking(
        [call] {
          if (call->keyfile.ok()) (void)RemoveKeyFile(*call->keyfile);
        },
        [done, s] { done(s); }, Lane::kController);
  };
  // A leading '.': no volume ID has one, so this never names a volume's key.
  const std::string id = ".controller-" + std::to_string(++key_files_);
  loop.RunBlocking(
      [call, path = options_.clusters.cluster_config_path, ceph_dir = options_.clusters.ceph_dir,
       dir = options_.key_dir, id, key = secrets.user_key] {
        call->config = LoadClusters(path, ceph_dir);
        if (call->config.ok()) call->keyfile = WriteKeyFile(dir, id, key);
      },
      [this, call, cluster_id, ns, user = secrets.user_id, work = std::move(work), finish, &loop] {
        if (!call->config.ok()) return finish(call->config.status());
        if (!call->keyfile.ok()) return finish(call->keyfile.status().WithContext("write key file"));
        auto entry = call->config->Find(cluster_id);
        if (!entry.ok()) return finish(entry.status());
        // The cluster of the images this call works on; each names its own.
        ImageSpec cluster_images;
        cluster_images.monitors = entry->monitors;
        cluster_images.ceph_conf = entry->CephConfOr(options_.clusters.ceph_conf);
        cluster_images.user_id = user;
        cluster_images.keyfile = *call->keyfile;
        std::string effective_ns = ns.empty() ? entry->rados_namespace : ns;
        RadosConfig config = RadosConfigForImage(cluster_images, options_.clusters.rados_timeout_s);
        rados_.Get(config, [&loop, call, work, finish, effective_ns](Result<std::shared_ptr<RadosCluster>> cluster) {
          if (!cluster.ok()) return finish(cluster.status());
          loop.RunBlocking(
              [call, work, cluster = *cluster, effective_ns] { call->status = work(cluster, effective_ns); },
              [call, finish] { finish(call->status); }, Lane::kController);
        });
      },
      Lane::kController);
}

grpc::ServerUnaryReactor* ControllerService::CreateVolume(grpc::CallbackServerContext* c,
                                                          const csi::v1::CreateVolumeRequest* r,
                                                          csi::v1::CreateVolumeResponse* response) {
  return LockedCall<CreateVolumeParams>(
      env_, c, "CreateVolume", r, ParseCreateVolumeRequest,
      [this](const CreateVolumeParams& p) {
        std::vector<std::string> keys = {"volume name " + p.name};
        if (p.source.kind == ContentSource::Kind::kSnapshot) keys.push_back("snapshot " + p.source.id);
        if (p.source.kind == ContentSource::Kind::kVolume) keys.push_back("volume " + p.source.id);
        return locks_.Lock(std::move(keys));
      },
      [this, r, response](CreateVolumeParams parsed, OpLocks::Guard guard, RpcDone done) {
        auto p = std::make_shared<CreateVolumeParams>(std::move(parsed));
        if (!options_.set_metadata) p->metadata.clear();
        auto held = std::make_shared<OpLocks::Guard>(std::move(guard));
        auto create = [this, p, r, response, held, done](std::optional<KmsSettings> volume_kms) {
          auto out = std::make_shared<CreatedVolume>();
          auto work = [p, out, volume_kms, resolve = ResolveKmsOnThisNode()](
                          const std::shared_ptr<RadosCluster>& cluster, const std::string& ns) {
            NBDK_RETURN_IF_ERROR(ChooseRestoreTopology(*cluster, *p));
            auto created = CreateVolumeBlocking(cluster, *p, ns, volume_kms, resolve);
            if (!created.ok()) return created.status();
            *out = std::move(*created);
            return Status::Ok();
          };
          OnCluster(p->cluster_id, p->rados_namespace, p->secrets, work, [p, r, response, out, held, done](Status s) {
            if (s.ok()) {
              csi::v1::Volume* v = response->mutable_volume();
              v->set_volume_id(out->volume_id);
              v->set_capacity_bytes(out->size_bytes);
              for (const auto& [k, val] : out->context) (*v->mutable_volume_context())[k] = val;
              if (p->accessible_topology) {
                auto* segments = v->add_accessible_topology()->mutable_segments();
                for (const auto& [k, val] : *p->accessible_topology) (*segments)[k] = val;
              }
              if (p->source.kind != ContentSource::Kind::kNone) {
                *v->mutable_content_source() = r->volume_content_source();
              }
            }
            done(s);
          });
        };
        if (!p->encryption_kms_id) return create(std::nullopt);
        // Before the cluster is reached, as ceph-csi does: a KMS nbdkeeper
        // does not serve never waits on a cluster that does not answer.
        RunBlockingResult<KmsSettings>(
            env_.loop,
            [kms_id = *p->encryption_kms_id, resolve = ResolveKmsOnThisNode()] {
              return ResolveRequestedKms(kms_id, resolve);
            },
            [create, done](Result<KmsSettings> kms) {
              if (!kms.ok()) return done(kms.status());
              create(std::move(*kms));
            },
            Lane::kController);
      });
}

grpc::ServerUnaryReactor* ControllerService::DeleteVolume(grpc::CallbackServerContext* c,
                                                          const csi::v1::DeleteVolumeRequest* r,
                                                          csi::v1::DeleteVolumeResponse*) {
  return Dispatch(env_, c, "DeleteVolume", [this, r](RpcDone done) {
    auto parsed = ParseDeleteVolumeRequest(*r);
    if (!parsed.ok()) return done(parsed.status());
    if (!*parsed) return done(Status::Ok());
    auto lock = locks_.Lock("volume " + r->volume_id());
    if (!lock.ok()) return done(lock.status());
    auto guard = std::make_shared<OpLocks::Guard>(std::move(*lock));
    auto v = std::make_shared<VolumeRef>(std::move(**parsed));
    OnCluster(
        v->decoded.cluster_id, "", v->secrets,
        [v](const std::shared_ptr<RadosCluster>& cluster, const std::string& ns) {
          return DeleteVolumeBlocking(cluster, *v, ns);
        },
        [guard, done](Status s) { done(s); });
  });
}

grpc::ServerUnaryReactor* ControllerService::ControllerExpandVolume(grpc::CallbackServerContext* c,
                                                                    const csi::v1::ControllerExpandVolumeRequest* r,
                                                                    csi::v1::ControllerExpandVolumeResponse* response) {
  return LockedCall<ControllerExpandParams>(
      env_, c, "ControllerExpandVolume", r, ParseControllerExpandRequest,
      [this](const ControllerExpandParams& p) { return locks_.Lock("volume " + p.volume.volume_id); },
      [this, response](ControllerExpandParams parsed, OpLocks::Guard guard, RpcDone done) {
        auto p = std::make_shared<ControllerExpandParams>(std::move(parsed));
        auto held = std::make_shared<OpLocks::Guard>(std::move(guard));
        auto grown = std::make_shared<ExpandedVolume>();
        auto work = [p, grown](const std::shared_ptr<RadosCluster>& cluster, const std::string& ns) {
          auto expanded = ExpandVolumeBlocking(cluster, p->volume, p->size_bytes, ns);
          if (!expanded.ok()) return expanded.status();
          *grown = *expanded;
          return Status::Ok();
        };
        auto answer = [p, grown, response, held, done](Status s) {
          if (s.ok()) {
            response->set_capacity_bytes(grown->size_bytes);
            // An encrypted block volume's LUKS mapper grows on the node too.
            response->set_node_expansion_required(p->node_expansion_required || grown->encrypted);
          }
          done(s);
        };
        OnCluster(p->volume.decoded.cluster_id, "", p->volume.secrets, work, answer);
      });
}

grpc::ServerUnaryReactor* ControllerService::ValidateVolumeCapabilities(
    grpc::CallbackServerContext* c, const csi::v1::ValidateVolumeCapabilitiesRequest* r,
    csi::v1::ValidateVolumeCapabilitiesResponse* response) {
  // Read-only: no op lock.
  return Dispatch(env_, c, "ValidateVolumeCapabilities", [this, r, response](RpcDone done) {
    auto parsed = ParseValidateRequest(*r);
    if (!parsed.ok()) return done(parsed.status());
    auto p = std::make_shared<ValidateParams>(std::move(*parsed));
    OnCluster(
        p->volume.decoded.cluster_id, "", p->volume.secrets,
        [p](const std::shared_ptr<RadosCluster>& cluster, const std::string& ns) {
          return CheckVolumeExistsBlocking(cluster, p->volume, ns);
        },
        [p, r, response, done](Status s) {
          if (!s.ok()) return done(s);
          if (!p->capabilities.ok()) {
            response->set_message(p->capabilities.message());
            return done(Status::Ok());
          }
          csi::v1::ValidateVolumeCapabilitiesResponse::Confirmed* confirmed = response->mutable_confirmed();
          *confirmed->mutable_volume_capabilities() = r->volume_capabilities();
          *confirmed->mutable_volume_context() = r->volume_context();
          *confirmed->mutable_parameters() = r->parameters();
          done(Status::Ok());
        });
  });
}

grpc::ServerUnaryReactor* ControllerService::ControllerGetCapabilities(
    grpc::CallbackServerContext* c, const csi::v1::ControllerGetCapabilitiesRequest*,
    csi::v1::ControllerGetCapabilitiesResponse* response) {
  return Dispatch(env_, c, "ControllerGetCapabilities", [response](RpcDone done) {
    using Rpc = csi::v1::ControllerServiceCapability::RPC;
    for (auto type : {Rpc::CREATE_DELETE_VOLUME, Rpc::EXPAND_VOLUME, Rpc::CREATE_DELETE_SNAPSHOT, Rpc::LIST_SNAPSHOTS,
                      Rpc::CLONE_VOLUME}) {
      response->add_capabilities()->mutable_rpc()->set_type(type);
    }
    done(Status::Ok());
  });
}

}  // namespace nbdk
