// The node plugin driven as a Nomad client drives it (runs in the test VM,
// beside the Node VM tests in one binary): Nomad's request paths beneath the
// plugin's stage_publish_base_dir (the daemon's --csi-root) and Nomad's call
// order, as hashicorp/nomad's client/pluginmanager/csimanager/volume.go and
// client/allocrunner/csi_hook.go make them:
//  - MountVolume: MkdirAll(<base>/staging/<ns>/<vol>/<usage>, 0700); unless
//    that path is a mount point, NodeStageVolume; MkdirAll(<base>/per-alloc/
//    <alloc>/<vol>, 0700); unless <that>/<usage> is a mount point,
//    NodePublishVolume there;
//  - a client restart (csi_hook restoreMounts): an alloc whose target is
//    still a mount point gets no call at all - no claim, no stage, no
//    publish - so the plugin alone must have kept the volume alive;
//  - UnmountVolume: NodeUnpublishVolume, remove the target if still there,
//    NodeUnstageVolume once no alloc claims the volume.
// Between the two client runs the plugin restarts and every rbd-nbd is
// killed while no daemon runs; the second run then finds its targets
// mounted, calls nothing, and IO and data must be intact.
// Its own daemon, root and images: independent of the other suites.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "test/csi/node_vm_fixture.h"

namespace nbdk::vmtest {
namespace {

namespace fs = std::filesystem;

// A volume as Nomad knows it: its Nomad ID and namespace name the paths,
// its external ID is the CSI volume ID; the usage is the alloc's request.
struct NomadVolume {
  std::string id, ns = "default", external_id;
  bool block = false;
  std::map<std::string, std::string> context;
  // UsageOptions.ToFS: "rw-" or "ro-", attachment mode, "-", access mode.
  std::string Usage() const {
    return std::string("rw-") + (block ? "block-device" : "file-system") + "-single-node-writer";
  }
  csi::v1::VolumeCapability Capability() const {
    if (block) return BlockCapability();
    csi::v1::VolumeCapability cap = MountCapability("ext4");
    cap.mutable_mount()->add_mount_flags("noatime");  // the volume spec's mount_options
    return cap;
  }
};

// One Nomad client's volume manager for the plugin; `calls` lists the RPCs
// it made, in order.
class NomadClient {
 public:
  NomadClient(std::string base, csi::v1::Node::Stub* node) : base_(std::move(base)), node_(node) {}

  std::string Staging(const NomadVolume& v) const { return base_ + "/staging/" + v.ns + "/" + v.id + "/" + v.Usage(); }
  std::string Target(const NomadVolume& v, const std::string& alloc) const {
    return base_ + "/per-alloc/" + alloc + "/" + v.id + "/" + v.Usage();
  }

  // csi_hook's restoreMounts after a client restart: true when the target
  // is still mounted, and then the alloc's volume gets no call.
  bool HasMount(const NomadVolume& v, const std::string& alloc) const { return IsMountPoint(Target(v, alloc)); }

  grpc::Status MountVolume(const NomadVolume& v, const std::string& alloc) {
    const std::string staging = Staging(v);
    MakeDirs(staging);
    if (!IsMountPoint(staging)) {
      csi::v1::NodeStageVolumeRequest req;
      req.set_volume_id(v.external_id);
      req.set_staging_target_path(staging);
      *req.mutable_volume_capability() = v.Capability();
      Fill(v, req.mutable_secrets(), req.mutable_volume_context());
      grpc::ClientContext ctx;
      csi::v1::NodeStageVolumeResponse resp;
      calls.push_back("NodeStageVolume");
      grpc::Status s = node_->NodeStageVolume(&ctx, req, &resp);
      if (!s.ok()) return s;
    }
    const std::string target = Target(v, alloc);
    MakeDirs(fs::path(target).parent_path().string());
    if (IsMountPoint(target)) return grpc::Status::OK;
    csi::v1::NodePublishVolumeRequest req;
    req.set_volume_id(v.external_id);
    req.set_staging_target_path(staging);
    req.set_target_path(target);
    req.set_readonly(false);
    *req.mutable_volume_capability() = v.Capability();
    Fill(v, req.mutable_secrets(), req.mutable_volume_context());
    grpc::ClientContext ctx;
    csi::v1::NodePublishVolumeResponse resp;
    calls.push_back("NodePublishVolume");
    return node_->NodePublishVolume(&ctx, req, &resp);
  }

  grpc::Status UnmountVolume(const NomadVolume& v, const std::string& alloc) {
    const std::string target = Target(v, alloc);
    csi::v1::NodeUnpublishVolumeRequest unpublish;
    unpublish.set_volume_id(v.external_id);
    unpublish.set_target_path(target);
    grpc::ClientContext uctx;
    csi::v1::NodeUnpublishVolumeResponse uresp;
    calls.push_back("NodeUnpublishVolume");
    grpc::Status s = node_->NodeUnpublishVolume(&uctx, unpublish, &uresp);
    if (!s.ok()) return s;
    std::error_code ec;
    fs::remove(target, ec);  // Nomad's os.Remove of a target the plugin left
    csi::v1::NodeUnstageVolumeRequest unstage;
    unstage.set_volume_id(v.external_id);
    unstage.set_staging_target_path(Staging(v));
    grpc::ClientContext sctx;
    csi::v1::NodeUnstageVolumeResponse sresp;
    calls.push_back("NodeUnstageVolume");
    return node_->NodeUnstageVolume(&sctx, unstage, &sresp);
  }

  std::vector<std::string> calls;

 private:
  static void MakeDirs(const std::string& dir) {
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms::owner_all);
  }
  // Nomad sends the volume's secrets and context with both calls.
  static void Fill(const NomadVolume& v, google::protobuf::Map<std::string, std::string>* secrets,
                   google::protobuf::Map<std::string, std::string>* context) {
    (*secrets)["userID"] = Ceph().user;
    (*secrets)["userKey"] = Ceph().key;
    for (const auto& [k, val] : v.context) (*context)[k] = val;
  }

  std::string base_;
  csi::v1::Node::Stub* node_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Writes `text` to `path` and fsyncs it: the write reached the device.
bool WriteFileSynced(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

// One 4 KiB block of `fill` at `offset` of the block target (O_DIRECT), or
// the block read back from there.
bool WriteBlock(const std::string& device, off_t offset, char fill) {
  int fd = ::open(device.c_str(), O_RDWR | O_DIRECT);
  if (fd < 0) return false;
  void* buf = nullptr;
  bool ok = ::posix_memalign(&buf, 4096, 4096) == 0;
  if (ok) {
    std::memset(buf, fill, 4096);
    ok = ::pwrite(fd, buf, 4096, offset) == 4096 && ::fsync(fd) == 0;
  }
  ::free(buf);
  ::close(fd);
  return ok;
}
std::string ReadBlock(const std::string& device, off_t offset) {
  int fd = ::open(device.c_str(), O_RDONLY | O_DIRECT);
  if (fd < 0) return "";
  void* buf = nullptr;
  std::string out;
  if (::posix_memalign(&buf, 4096, 4096) == 0 && ::pread(fd, buf, 4096, offset) == 4096) {
    out.assign(static_cast<char*>(buf), 4096);
  }
  ::free(buf);
  ::close(fd);
  return out;
}

class NomadClientVmTest : public ::testing::Test {
 protected:
  static constexpr const char* kAlloc = "8f2b6c1e-4d3a-4b7e-9c0d-5e6f7a8b9c0d";

  void SetUp() override {
    std::string error;
    // --csi-root: the node job's stage_publish_base_dir, as the daemon sees it.
    ASSERT_TRUE(node_.Start(true, {"--csi-root=" + Base(), "--reattach-timeout=120"}, &error)) << error;
  }
  void TearDown() override {
    int st = node_.Stop();
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "nbdkeeperd exit";
    if (HasFailure()) std::fprintf(stderr, "--- nbdkeeperd log ---\n%s\n", node_.daemon().Log().c_str());
  }

  std::string Base() const { return node_.root() + "/csi-volumes"; }
  static NomadVolume Volume(const std::string& image, bool block) {
    NomadVolume v;
    v.id = image;
    v.external_id = image;  // a static volume: its volume ID is the image name
    v.block = block;
    v.context = {{"staticVolume", "true"}, {"clusterID", "test"}, {"pool", Ceph().pool}, {"mounter", "rbd-nbd"}};
    return v;
  }
  static void Create(const std::string& image) {
    std::string error;
    ASSERT_TRUE(CreateTestImage(image, 64, &error)) << error;
  }

  // The node plugin's task restarts, and every rbd-nbd of `images` dies
  // while no daemon runs: the next daemon heals them from its journal.
  void RestartPluginKillingRbdNbd(const std::vector<std::string>& images) {
    int st = node_.Stop();  // on_stop leave: rbd-nbd keeps serving
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "nbdkeeperd exit";
    for (const std::string& image : images) {
      std::vector<pid_t> pids = RbdNbdProcessesFor(Ceph(), image);
      ASSERT_EQ(pids.size(), 1u) << image << ": one rbd-nbd left serving by the stopped daemon";
      ASSERT_EQ(::kill(pids[0], SIGKILL), 0) << image;
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (const std::string& image : images) {
      while (RbdNbdProcessesFor(image) > 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      ASSERT_EQ(RbdNbdProcessesFor(image), 0) << image << ": rbd-nbd outlived its SIGKILL";
    }
    std::string error;
    ASSERT_TRUE(node_.Start(false, {"--csi-root=" + Base(), "--reattach-timeout=120"}, &error)) << error;
  }

  VmNode node_{"/run/nbdk-nomad-vm", "nomad-client"};
};

TEST_F(NomadClientVmTest, AClientRestartFindsItsVolumesKeptAliveByThePluginAlone) {
  const NomadVolume db = Volume("nomad-db", false), raw = Volume("nomad-raw", true);
  ASSERT_NO_FATAL_FAILURE(Create(db.id));
  ASSERT_NO_FATAL_FAILURE(Create(raw.id));

  // First client run: the alloc's volumes staged and published.
  NomadClient first(Base(), node_.stub().get());
  ASSERT_GRPC_OK(first.MountVolume(db, kAlloc));
  ASSERT_GRPC_OK(first.MountVolume(raw, kAlloc));
  EXPECT_EQ(first.calls,
            (std::vector<std::string>{"NodeStageVolume", "NodePublishVolume", "NodeStageVolume", "NodePublishVolume"}));
  const std::string db_target = first.Target(db, kAlloc), raw_target = first.Target(raw, kAlloc);
  EXPECT_TRUE(IsMountPoint(db_target));
  EXPECT_TRUE(fs::is_block_file(raw_target)) << "a block target is the device node's bind mount";
  EXPECT_FALSE(IsMountPoint(first.Staging(db))) << "the plugin mounts beneath Nomad's staging path, not on it";
  ASSERT_TRUE(WriteFileSynced(db_target + "/before.txt", "written in the first client run\n"));
  ASSERT_TRUE(WriteBlock(raw_target, 8192, 'n'));

  // Nomad's check on a staging path is on the path itself, so a second
  // MountVolume (another alloc, or a retry) stages again: a repeat.
  NomadClient retry(Base(), node_.stub().get());
  ASSERT_GRPC_OK(retry.MountVolume(db, kAlloc));
  EXPECT_EQ(retry.calls, (std::vector<std::string>{"NodeStageVolume"})) << "the target is mounted: no publish";

  ASSERT_NO_FATAL_FAILURE(RestartPluginKillingRbdNbd({db.id, raw.id}));

  // Second client run: restoreMounts finds both targets mounted and calls
  // nothing; the volumes are served by what the daemon healed.
  NomadClient second(Base(), node_.stub().get());
  ASSERT_TRUE(second.HasMount(db, kAlloc));
  ASSERT_TRUE(second.HasMount(raw, kAlloc));
  EXPECT_TRUE(second.calls.empty());
  EXPECT_EQ(node_.StatusField(db.id, "state"), "Connected");
  EXPECT_EQ(node_.StatusField(raw.id, "state"), "Connected");
  EXPECT_EQ(RbdNbdProcessesFor(db.id), 1);
  EXPECT_EQ(RbdNbdProcessesFor(raw.id), 1);

  EXPECT_EQ(ReadFile(db_target + "/before.txt"), "written in the first client run\n");
  EXPECT_TRUE(WriteFileSynced(db_target + "/after.txt", "written after the restart\n"));
  EXPECT_EQ(ReadFile(db_target + "/after.txt"), "written after the restart\n");
  EXPECT_EQ(ReadBlock(raw_target, 8192), std::string(4096, 'n'));
  EXPECT_TRUE(WriteBlock(raw_target, 12288, 'm'));
  EXPECT_EQ(ReadBlock(raw_target, 12288), std::string(4096, 'm'));

  // The alloc stops: unpublish and unstage, in Nomad's order.
  ASSERT_GRPC_OK(second.UnmountVolume(db, kAlloc));
  ASSERT_GRPC_OK(second.UnmountVolume(raw, kAlloc));
  EXPECT_EQ(second.calls, (std::vector<std::string>{"NodeUnpublishVolume", "NodeUnstageVolume", "NodeUnpublishVolume",
                                                    "NodeUnstageVolume"}));
  EXPECT_FALSE(fs::exists(db_target));
  EXPECT_FALSE(fs::exists(raw_target));
  EXPECT_FALSE(IsMountPoint(first.Staging(db) + "/" + db.external_id));
  EXPECT_EQ(RbdNbdProcessesFor(db.id), 0);
  EXPECT_EQ(RbdNbdProcessesFor(raw.id), 0);
  EXPECT_TRUE(fs::is_directory(first.Staging(db))) << "Nomad's own staging directory stays";
}

}  // namespace
}  // namespace nbdk::vmtest
