#include "daemon/ctl/map_operations.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "base/unique_fd.h"
#include "daemon/ctl/cephx_key.h"
#include "journal/volume_id.h"

namespace nbdk::ctl {
namespace {

using AccessMode = csi::v1::VolumeCapability::AccessMode;

csi::v1::VolumeCapability CapabilityFor(const MapSpec& spec) {
  csi::v1::VolumeCapability cap;
  if (spec.block) {
    cap.mutable_block();
  } else {
    cap.mutable_mount()->set_fs_type(spec.fs_type);
    for (const std::string& o : spec.mount_options) cap.mutable_mount()->add_mount_flags(o);
  }
  cap.mutable_access_mode()->set_mode(spec.ReadOnly() ? AccessMode::SINGLE_NODE_READER_ONLY
                                                      : AccessMode::SINGLE_NODE_WRITER);
  return cap;
}

// The volume context of a static volume (and what a made one adds to its
// own). A snapshot's volume ID is not its image's name: imageName is.
void AddMapContext(const MapSpec& spec, std::map<std::string, std::string>* context) {
  (*context)["mounter"] = "rbd-nbd";
  if (!spec.snap.empty()) {
    (*context)["imageName"] = spec.image;
    (*context)["imageSnapshot"] = spec.snap;
  }
  if (!spec.rados_namespace.empty()) (*context)["radosNamespace"] = spec.rados_namespace;
  if (!spec.map_options.empty()) (*context)["mapOptions"] = "nbd:" + spec.map_options;
  if (!spec.passphrase_file.empty()) (*context)["encrypted"] = "true";
}

// The LUKS passphrase of an encrypted map: every byte of a regular file
// that only its owner may read (it is a secret, as a keyring is).
Result<std::string> ReadPassphraseFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return Status::FromErrno(errno, "--encrypt: open " + path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Status::FromErrno(errno, "--encrypt: stat " + path);
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument("--encrypt: " + path + " is not a regular file");
  if ((st.st_mode & 077) != 0) {
    return Status::InvalidArgument("--encrypt: " + path + " may be read by others than its owner (chmod 600 it)");
  }
  constexpr off_t kMaxBytes = 1024;
  if (st.st_size == 0 || st.st_size > kMaxBytes) {
    return Status::InvalidArgument("--encrypt: " + path + " holds " + std::to_string(st.st_size) +
                                   " bytes; a passphrase has 1 to 1024");
  }
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  ssize_t n = ::pread(fd.get(), bytes.data(), bytes.size(), 0);
  if (n != static_cast<ssize_t>(bytes.size())) return Status::IoError("--encrypt: short read of " + path);
  return bytes;
}

// The cephx user and, for an encrypted map, the passphrase (KMS default:
// the secret is the LUKS passphrase itself).
Status SetSecrets(google::protobuf::Map<std::string, std::string>* secrets, const MapSpec& spec,
                  const std::string& key) {
  (*secrets)["userID"] = spec.user_id;
  (*secrets)["userKey"] = key;
  if (spec.passphrase_file.empty()) return Status::Ok();
  auto passphrase = ReadPassphraseFile(spec.passphrase_file);
  if (!passphrase.ok()) return passphrase.status();
  (*secrets)["encryptionPassphrase"] = std::move(*passphrase);
  return Status::Ok();
}

}  // namespace

Status MapOperations::Failed(const CtlError& error) {
  error_ = error;
  return Status(error.exit == kExitNotFound ? Code::kNotFound : Code::kFailedPrecondition, error.message);
}

Result<MappedVolume> MapOperations::Map(const MapSpec& spec, const ChosenCluster& cluster) {
  auto key = ReadCephxKey(spec.keyfile, spec.user_id, cluster);
  if (!key.ok()) return Failed({kExitUsage, key.status().message()});
  if (!client_.WaitReady(30000)) return Failed({kExitNotRunning, "nbdkeeperd is not ready (still healing?)"});
  std::string volume_id = StaticVolumeId(spec);
  std::map<std::string, std::string> context = {
      {"staticVolume", "true"}, {"clusterID", cluster.cluster_id}, {"pool", spec.pool}};
  AddMapContext(spec, &context);
  if (spec.size_bytes > 0) {
    csi::v1::CreateVolumeRequest req;
    req.set_name("nbdkeeperctl-" + spec.Spec());
    req.mutable_capacity_range()->set_required_bytes(spec.size_bytes);
    *req.add_volume_capabilities() = CapabilityFor(spec);
    auto& params = *req.mutable_parameters();
    params["clusterID"] = cluster.cluster_id;
    params["pool"] = spec.pool;
    params["nbdkeeper.io/imageName"] = spec.image;
    if (!spec.rados_namespace.empty()) params["radosNamespace"] = spec.rados_namespace;
    if (!spec.passphrase_file.empty()) params["encrypted"] = "true";
    if (Status s = SetSecrets(req.mutable_secrets(), spec, *key); !s.ok()) return Failed({kExitUsage, s.message()});
    grpc::ClientContext ctx;
    csi::v1::CreateVolumeResponse resp;
    grpc::Status s = client_.controller().CreateVolume(&ctx, req, &resp);
    if (!s.ok()) {
      CtlError e = FromGrpc(s, "create " + spec.Spec());
      // --size makes the image; one it did not make is never taken over.
      if (s.error_code() == grpc::StatusCode::ALREADY_EXISTS)
        e.message += " - map it without --size to use it as it is";
      return Failed(e);
    }
    volume_id = resp.volume().volume_id();
    context = {resp.volume().volume_context().begin(), resp.volume().volume_context().end()};
    AddMapContext(spec, &context);
  }
  NBDK_RETURN_IF_ERROR(StageAndPublish(spec, volume_id, context, *key));
  return Describe(volume_id);
}

Result<MappedVolume> MapOperations::MapPersisted(const MapSpec& spec, const ChosenCluster& cluster,
                                                 const std::string& volume_id) {
  auto key = ReadCephxKey(spec.keyfile, spec.user_id, cluster);
  if (!key.ok()) return Failed({kExitUsage, spec.Spec() + ": " + key.status().message()});
  std::map<std::string, std::string> context = {
      {"clusterID", cluster.cluster_id}, {"pool", spec.pool}, {"imageName", spec.image}};
  if (!DecodeVolumeId(volume_id).ok()) context["staticVolume"] = "true";
  AddMapContext(spec, &context);
  NBDK_RETURN_IF_ERROR(StageAndPublish(spec, volume_id, context, *key));
  return Describe(volume_id);
}

Status MapOperations::StageAndPublish(const MapSpec& spec, const std::string& volume_id,
                                      const std::map<std::string, std::string>& context, const std::string& key) {
  // The CO's part: the staging directory exists before NodeStageVolume.
  std::string staging = daemon_.state_dir + "/staging/" + volume_id;
  if (::mkdir(staging.c_str(), 0700) != 0 && errno != EEXIST) {
    return Failed({kExitFailed, "create " + staging + ": " + Status::FromErrno(errno, "mkdir").message() +
                                    " (map runs as root, beside nbdkeeperd)"});
  }
  csi::v1::NodeStageVolumeRequest stage;
  stage.set_volume_id(volume_id);
  stage.set_staging_target_path(staging);
  *stage.mutable_volume_capability() = CapabilityFor(spec);
  if (Status s = SetSecrets(stage.mutable_secrets(), spec, key); !s.ok()) return Failed({kExitUsage, s.message()});
  stage.mutable_volume_context()->insert(context.begin(), context.end());
  grpc::ClientContext stage_ctx;
  csi::v1::NodeStageVolumeResponse staged;
  grpc::Status s = client_.node().NodeStageVolume(&stage_ctx, stage, &staged);
  if (!s.ok()) return Failed(FromGrpc(s, "map " + spec.Spec()));
  if (spec.mount.empty()) return Status::Ok();
  csi::v1::NodePublishVolumeRequest publish;
  publish.set_volume_id(volume_id);
  publish.set_staging_target_path(staging);
  publish.set_target_path(spec.mount);
  publish.set_readonly(spec.ReadOnly());
  *publish.mutable_volume_capability() = CapabilityFor(spec);
  grpc::ClientContext publish_ctx;
  csi::v1::NodePublishVolumeResponse published;
  s = client_.node().NodePublishVolume(&publish_ctx, publish, &published);
  if (!s.ok()) return Failed(FromGrpc(s, "mount " + spec.Spec() + " at " + spec.mount));
  return Status::Ok();
}

Result<MappedVolume> MapOperations::Describe(const std::string& volume_id) {
  // The link is placed off the daemon's loop right after the map: a script
  // that uses it next must find it.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (;;) {
    auto status = client_.GetStatus();
    if (!status.ok()) return Failed({kExitNotRunning, status.status().message()});
    const VolumeRow* v = FindVolume(*status, volume_id);
    if (v == nullptr) return Failed({kExitFailed, "volume " + volume_id + " was staged but /status does not list it"});
    if (!v->link.empty() || std::chrono::steady_clock::now() > deadline) {
      return MappedVolume{volume_id, v->device, v->MountPoint(), v->link};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Status MapOperations::Unmap(const VolumeRow& volume) {
  for (const std::string& target : volume.targets) {
    csi::v1::NodeUnpublishVolumeRequest req;
    req.set_volume_id(volume.volume_id);
    req.set_target_path(target);
    grpc::ClientContext ctx;
    csi::v1::NodeUnpublishVolumeResponse resp;
    grpc::Status s = client_.node().NodeUnpublishVolume(&ctx, req, &resp);
    if (!s.ok()) return Failed(FromGrpc(s, "unmount " + target));
  }
  csi::v1::NodeUnstageVolumeRequest req;
  req.set_volume_id(volume.volume_id);
  req.set_staging_target_path(volume.staging_path);
  grpc::ClientContext ctx;
  csi::v1::NodeUnstageVolumeResponse resp;
  grpc::Status s = client_.node().NodeUnstageVolume(&ctx, req, &resp);
  if (!s.ok()) return Failed(FromGrpc(s, "unmap " + volume.Spec()));
  return Status::Ok();
}

Result<int64_t> MapOperations::Expand(const VolumeRow& volume, int64_t size_bytes, const MapSpec& credentials) {
  if (DecodeVolumeId(volume.volume_id).ok()) {
    auto cluster = ChooseCluster(daemon_.ceph_csi_config, daemon_.ceph_dir, credentials.cluster);
    if (!cluster.ok()) return Failed({kExitUsage, cluster.status().message()});
    auto key = ReadCephxKey(credentials.keyfile, credentials.user_id, *cluster);
    if (!key.ok()) return Failed({kExitUsage, key.status().message()});
    csi::v1::ControllerExpandVolumeRequest req;
    req.set_volume_id(volume.volume_id);
    req.mutable_capacity_range()->set_required_bytes(size_bytes);
    (*req.mutable_secrets())["userID"] = credentials.user_id;
    (*req.mutable_secrets())["userKey"] = *key;
    grpc::ClientContext ctx;
    csi::v1::ControllerExpandVolumeResponse resp;
    grpc::Status s = client_.controller().ControllerExpandVolume(&ctx, req, &resp);
    if (!s.ok()) return Failed(FromGrpc(s, "grow image " + volume.image));
  }
  csi::v1::NodeExpandVolumeRequest req;
  req.set_volume_id(volume.volume_id);
  req.set_volume_path(volume.staging_path);
  req.mutable_capacity_range()->set_required_bytes(size_bytes);
  grpc::ClientContext ctx;
  csi::v1::NodeExpandVolumeResponse resp;
  grpc::Status s = client_.node().NodeExpandVolume(&ctx, req, &resp);
  if (!s.ok()) {
    CtlError e = FromGrpc(s, "expand " + volume.Spec());
    if (!DecodeVolumeId(volume.volume_id).ok() && volume.snap.empty()) {
      e.message += " (a static image grows with `rbd resize` first)";
    }
    return Failed(e);
  }
  return resp.capacity_bytes();
}

}  // namespace nbdk::ctl
