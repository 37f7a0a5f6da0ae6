#include "test/systemd/systemd_vm_env.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>

#include "base/command.h"
#include "base/unique_fd.h"
#include "test/common/vm_command.h"

namespace nbdk::systemdtest {

namespace {
constexpr char kPlugin[] = "/var/lib/kubelet/plugins/kubernetes.io/csi/rbd.nbdkeeper.io/";
constexpr char kPod[] = "/var/lib/kubelet/pods/sd-pod/";
}  // namespace

std::string CsiVolume::StagingPath() const { return std::string(kPlugin) + image + "/globalmount"; }

std::string CsiVolume::TargetPath() const {
  return block ? std::string(kPod) + "volumeDevices/kubernetes.io~csi/" + image + "/dev"
               : std::string(kPod) + "volumes/kubernetes.io~csi/" + image + "/mount";
}

csi::v1::VolumeCapability CsiVolume::Capability() const {
  csi::v1::VolumeCapability cap;
  if (block) {
    cap.mutable_block();
  } else {
    cap.mutable_mount()->set_fs_type("ext4");
  }
  cap.mutable_access_mode()->set_mode(csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  return cap;
}

csi::v1::NodeStageVolumeRequest CsiVolume::StageRequest(const vmtest::VmCeph& ceph) const {
  csi::v1::NodeStageVolumeRequest req = vmtest::StageRequest(ceph, kCluster, image, StagingPath());
  *req.mutable_volume_capability() = Capability();
  return req;
}

csi::v1::NodePublishVolumeRequest CsiVolume::PublishRequest() const {
  csi::v1::NodePublishVolumeRequest req;
  req.set_volume_id(image);
  req.set_staging_target_path(StagingPath());
  req.set_target_path(TargetPath());
  *req.mutable_volume_capability() = Capability();
  return req;
}

std::string CsiVolume::DataPath() const { return block ? TargetPath() : TargetPath() + "/writer.dat"; }

const CsiVolume& Ext4Volume() {
  static const CsiVolume v{"sd-ext4", false};
  return v;
}

const CsiVolume& BlockVolume() {
  static const CsiVolume v{"sd-block", true};
  return v;
}

std::string MarkerText(const std::string& image) { return "written before the power cut to " + image + "\n"; }

Status WriteMarker(const std::string& path, bool block, const std::string& text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (block ? O_DIRECT : O_TRUNC), 0644));
  if (!fd.valid()) return Status::FromErrno(errno, "open " + path);
  void* buf = nullptr;
  if (::posix_memalign(&buf, 4096, 4096) != 0) return Status::ResourceExhausted("posix_memalign");
  std::unique_ptr<void, decltype(&std::free)> owned(buf, &std::free);
  std::memset(buf, 0, 4096);
  std::memcpy(buf, text.data(), std::min<size_t>(text.size(), 4096));
  size_t len = block ? 4096 : text.size();
  ssize_t n = ::pwrite(fd.get(), buf, len, block ? kBlockMarkerOffset : 0);
  if (n != static_cast<ssize_t>(len)) return Status::FromErrno(n < 0 ? errno : EIO, "write " + path);
  if (::fsync(fd.get()) != 0) return Status::FromErrno(errno, "fsync " + path);
  return Status::Ok();
}

Result<std::string> ReadMarker(const std::string& path, bool block) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::FromErrno(errno, "open " + path);
  std::string buf(4096, '\0');
  ssize_t n = ::pread(fd.get(), buf.data(), buf.size(), block ? kBlockMarkerOffset : 0);
  if (n < 0) return Status::FromErrno(errno, "read " + path);
  buf.resize(static_cast<size_t>(n));
  return buf.substr(0, buf.find('\0'));
}

vmtest::VmCeph& SystemdVmTest::Ceph() {
  static vmtest::VmCeph ceph = vmtest::VmCeph::FromEnv();
  return ceph;
}

void SystemdVmTest::SetUp() {
  if (!Ceph().complete()) GTEST_SKIP() << "not in the test VM";
}

std::unique_ptr<csi::v1::Node::Stub> NodeStub(const std::string& endpoint) {
  return csi::v1::Node::NewStub(grpc::CreateChannel(endpoint, grpc::InsecureChannelCredentials()));
}

std::unique_ptr<csi::v1::Identity::Stub> IdentityStub(const std::string& endpoint) {
  return csi::v1::Identity::NewStub(grpc::CreateChannel(endpoint, grpc::InsecureChannelCredentials()));
}

CtlRun Ctl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/local/bin/nbdkeeperctl", "--config", kDaemonConfig};
  argv.insert(argv.end(), args.begin(), args.end());
  Result<vmtest::CommandOutput> out = vmtest::RunCommand(argv, /*merge_stderr=*/true);
  if (!out.ok()) return {-1, out.status().ToString()};
  return {out->exit.code, out->stdout_text};
}

}  // namespace nbdk::systemdtest
