#include "test/csi/vm_node.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <signal.h>

#include <filesystem>
#include <fstream>

#include "test/common/http_client.h"

namespace nbdk::vmtest {

const CephEnv& Ceph() {
  static const CephEnv env = VmCeph::FromEnv();
  return env;
}

bool CreateTestImage(const std::string& name, int mib, std::string* error) {
  Status created = CreateImage(Ceph(), name, mib);
  if (!created.ok()) {
    // A leftover of an earlier run in the same VM: start over.
    Status removed = RemoveImage(Ceph(), name);
    created = removed.ok() ? CreateImage(Ceph(), name, mib) : removed;
  }
  if (!created.ok()) *error = created.ToString();
  return created.ok();
}

csi::v1::VolumeCapability MountCapability(const std::string& fs_type,
                                          csi::v1::VolumeCapability::AccessMode::Mode mode) {
  csi::v1::VolumeCapability cap;
  cap.mutable_mount()->set_fs_type(fs_type);
  cap.mutable_access_mode()->set_mode(mode);
  return cap;
}

csi::v1::VolumeCapability BlockCapability(csi::v1::VolumeCapability::AccessMode::Mode mode) {
  csi::v1::VolumeCapability cap;
  cap.mutable_block();
  cap.mutable_access_mode()->set_mode(mode);
  return cap;
}

int RbdNbdProcessesFor(const std::string& image) { return static_cast<int>(RbdNbdProcessesFor(Ceph(), image).size()); }

VmNode::VmNode(std::string root, std::string node_id) : root_(std::move(root)), node_id_(std::move(node_id)) {}

bool VmNode::Start(bool fresh, const std::vector<std::string>& extra, std::string* error) {
  const CephEnv& c = Ceph();
  if (!c.complete()) {
    *error = "run inside the test VM: CEPH_CONF, NBDK_CEPH_POOL, NBDK_CEPH_ID, NBDK_CEPH_KEY_FILE, NBDK_CEPH_MONITORS";
    return false;
  }
  if (fresh) {
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ + "/staging");
    std::filesystem::create_directories(root_ + "/pods");
    // "test-affine": the same cluster with read affinity, the node located
    // by its hostname label (test/csi/node_vm_fixture.h).
    std::ofstream(root_ + "/config.json")
        << R"([{"clusterID": "test", "monitors": [")" << c.monitors << R"("]},)"
        << R"( {"clusterID": "test-affine", "monitors": [")" << c.monitors
        << R"("], "readAffinity": {"enabled": true, "crushLocationLabels": ["kubernetes.io/hostname"]}}])";
    // ceph-csi's KMS config with its metadata KMS, for encrypted volumes.
    std::ofstream(root_ + "/kms.json") << R"({"secrets-metadata": {"encryptionKMSType": "metadata"}})";
  }
  node_.reset();
  daemon_ = std::make_unique<test::DaemonProcess>(NBDKEEPERD_PATH, root_, node_id_);
  std::vector<std::string> args = {"--ceph-csi-config=" + root_ + "/config.json", "--ceph-conf=" + c.conf,
                                   "--kms-config=" + root_ + "/kms.json", "--key-dir=" + root_ + "/keys",
                                   "--log-level=debug"};
  args.insert(args.end(), extra.begin(), extra.end());
  if (!daemon_->Start(args) || !daemon_->WaitReady(60000)) {
    *error = "nbdkeeperd " + node_id_ + " did not become ready:\n" + daemon_->Log();
    return false;
  }
  node_ = csi::v1::Node::NewStub(grpc::CreateChannel(daemon_->endpoint(), grpc::InsecureChannelCredentials()));
  return true;
}

int VmNode::Stop() {
  node_.reset();
  return daemon_ ? daemon_->Stop(SIGTERM) : -1;
}

void VmNode::Kill() {
  node_.reset();
  // The daemon first, so that it re-attaches nothing; then its rbd-nbd
  // processes, known by their key files beneath this node's key dir.
  if (daemon_) daemon_->Stop(SIGKILL);
  for (pid_t pid : ProcessesOf("rbd-nbd")) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find('\0' + root_ + "/keys/") != std::string::npos) ::kill(pid, SIGKILL);
  }
}

csi::v1::NodeStageVolumeRequest VmNode::StageReq(const std::string& image, const csi::v1::VolumeCapability& cap) const {
  csi::v1::NodeStageVolumeRequest req;
  req.set_volume_id(image);
  req.set_staging_target_path(StagingPath(image));
  *req.mutable_volume_capability() = cap;
  (*req.mutable_secrets())["userID"] = Ceph().user;
  (*req.mutable_secrets())["userKey"] = Ceph().key;
  auto& ctx = *req.mutable_volume_context();
  ctx["staticVolume"] = "true";
  ctx["clusterID"] = "test";
  ctx["pool"] = Ceph().pool;
  ctx["mounter"] = "rbd-nbd";
  std::filesystem::create_directories(StagingPath(image));
  return req;
}

grpc::Status VmNode::Stage(const csi::v1::NodeStageVolumeRequest& req) {
  grpc::ClientContext ctx;
  csi::v1::NodeStageVolumeResponse resp;
  return node_->NodeStageVolume(&ctx, req, &resp);
}

grpc::Status VmNode::Unstage(const std::string& volume_id) {
  csi::v1::NodeUnstageVolumeRequest req;
  req.set_volume_id(volume_id);
  req.set_staging_target_path(StagingPath(volume_id));
  grpc::ClientContext ctx;
  csi::v1::NodeUnstageVolumeResponse resp;
  return node_->NodeUnstageVolume(&ctx, req, &resp);
}

grpc::Status VmNode::Publish(const std::string& volume_id, const std::string& target,
                             const csi::v1::VolumeCapability& cap, bool read_only) {
  csi::v1::NodePublishVolumeRequest req;
  req.set_volume_id(volume_id);
  req.set_staging_target_path(StagingPath(volume_id));
  req.set_target_path(target);
  req.set_readonly(read_only);
  *req.mutable_volume_capability() = cap;
  grpc::ClientContext ctx;
  csi::v1::NodePublishVolumeResponse resp;
  return node_->NodePublishVolume(&ctx, req, &resp);
}

grpc::Status VmNode::Unpublish(const std::string& volume_id, const std::string& target) {
  csi::v1::NodeUnpublishVolumeRequest req;
  req.set_volume_id(volume_id);
  req.set_target_path(target);
  grpc::ClientContext ctx;
  csi::v1::NodeUnpublishVolumeResponse resp;
  return node_->NodeUnpublishVolume(&ctx, req, &resp);
}

csi::v1::NodeGetVolumeStatsResponse VmNode::Stats(const std::string& volume_id, const std::string& path,
                                                  grpc::Status* status) {
  csi::v1::NodeGetVolumeStatsRequest req;
  req.set_volume_id(volume_id);
  req.set_volume_path(path);
  grpc::ClientContext ctx;
  csi::v1::NodeGetVolumeStatsResponse resp;
  *status = node_->NodeGetVolumeStats(&ctx, req, &resp);
  return resp;
}

std::string VmNode::StatusOf(const std::string& volume_id) const {
  auto reply = test::HttpGet(daemon_->health_port(), "/status");
  rapidjson::Document doc;
  doc.Parse(reply.body.c_str());
  if (doc.HasParseError() || !doc.HasMember("volumes")) return "";
  for (const auto& v : doc["volumes"].GetArray()) {
    if (v["volume_id"].GetString() != volume_id) continue;
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    v.Accept(w);
    return buf.GetString();
  }
  return "";
}

std::string VmNode::StatusField(const std::string& volume_id, const std::string& field) const {
  std::string json = StatusOf(volume_id);
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember(field.c_str())) return "";
  const auto& v = doc[field.c_str()];
  if (v.IsString()) return v.GetString();
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  if (v.IsUint64()) return std::to_string(v.GetUint64());
  if (v.IsBool()) return v.GetBool() ? "true" : "false";
  return "";
}

}  // namespace nbdk::vmtest
