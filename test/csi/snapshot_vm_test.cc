// Snapshots and clones against the VM's real Ceph, through a real
// nbdkeeperd and gRPC: a 1 GiB volume staged (live, mapped by rbd-nbd) is
// written, snapshotted, written again; the snapshot restored into a larger
// volume and staged holds exactly the snapshot's data; a clone of the live
// volume holds its data at clone time; ceph-csi's omap keys and image
// names; the CSI codes the sanity suite expects; deleting source, snapshot
// and restored volume in every order loses no data and leaves nothing; a
// snapshot made as ceph-csi makes it (by the CLIs) serves nbdkeeper.
#include <fcntl.h>
#include <rbd/librbd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <set>
#include <vector>

#include "ceph/rados_cluster.h"
#include "journal/volume_id.h"
#include "test/common/vm_command.h"
#include "test/csi/controller_vm_helpers.h"
#include "test/csi/node_vm_fixture.h"

namespace nbdk::vmtest {
namespace {

using Code = grpc::StatusCode;
constexpr int64_t kMiB = 1 << 20;
constexpr int64_t kGiB = 1024 * kMiB;

// `bytes` of a pattern that differs per `seed` and per MiB.
std::string Pattern(char seed, int64_t bytes) {
  std::string out(bytes, '\0');
  for (int64_t i = 0; i < bytes; ++i) out[i] = static_cast<char>(seed + (i / kMiB) * 7 + (i % 251));
  return out;
}

bool WriteAt(const std::string& device, int64_t offset, const std::string& data) {
  int fd = ::open(device.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::pwrite(fd, data.data(), data.size(), offset) == static_cast<ssize_t>(data.size()) && ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

std::string ReadAt(const std::string& device, int64_t offset, int64_t bytes) {
  std::string out(bytes, '\0');
  int fd = ::open(device.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  ssize_t n = ::pread(fd, out.data(), out.size(), offset);
  ::close(fd);
  return n == bytes ? out : "";
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

class SnapshotVmTest : public NodeVmTest {
 protected:
  void SetUp() override {
    controller_ = csi::v1::Controller::NewStub(
        grpc::CreateChannel(Daemon().endpoint(), grpc::InsecureChannelCredentials()));
    RadosConfig rc{Ceph().conf, {}, Ceph().user, Ceph().keyfile, 30};
    auto cluster = RadosCluster::ConnectBlocking(rc);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    auto io = IoCtx::Open(*cluster, Ceph().pool, "");
    ASSERT_TRUE(io.ok()) << io.status().ToString();
    io_.emplace(std::move(*io));
    cluster_ = *cluster;
  }

  template <typename Request>
  static void Secrets(Request* r) {
    (*r->mutable_secrets())["userID"] = Ceph().user;
    (*r->mutable_secrets())["userKey"] = Ceph().key;
  }

  // CreateVolume, from `snapshot_id` or `volume_id` when given.
  grpc::Status Create(const std::string& name, int64_t bytes, csi::v1::CreateVolumeResponse* resp,
                      const std::string& snapshot_id = "", const std::string& volume_id = "") {
    csi::v1::CreateVolumeRequest req;
    req.set_name(name);
    req.mutable_capacity_range()->set_required_bytes(bytes);
    *req.add_volume_capabilities() = BlockCap();
    (*req.mutable_parameters())["clusterID"] = "test";
    (*req.mutable_parameters())["pool"] = Ceph().pool;
    if (!snapshot_id.empty()) req.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(snapshot_id);
    if (!volume_id.empty()) req.mutable_volume_content_source()->mutable_volume()->set_volume_id(volume_id);
    Secrets(&req);
    grpc::ClientContext ctx;
    return controller_->CreateVolume(&ctx, req, resp);
  }

  grpc::Status DeleteVolume(const std::string& volume_id) {
    csi::v1::DeleteVolumeRequest req;
    req.set_volume_id(volume_id);
    Secrets(&req);
    grpc::ClientContext ctx;
    csi::v1::DeleteVolumeResponse resp;
    return controller_->DeleteVolume(&ctx, req, &resp);
  }

  grpc::Status Snap(const std::string& name, const std::string& source, csi::v1::CreateSnapshotResponse* resp) {
    csi::v1::CreateSnapshotRequest req;
    req.set_name(name);
    req.set_source_volume_id(source);
    (*req.mutable_parameters())["clusterID"] = "test";
    Secrets(&req);
    grpc::ClientContext ctx;
    return controller_->CreateSnapshot(&ctx, req, resp);
  }

  grpc::Status DeleteSnap(const std::string& snapshot_id) {
    csi::v1::DeleteSnapshotRequest req;
    req.set_snapshot_id(snapshot_id);
    Secrets(&req);
    grpc::ClientContext ctx;
    csi::v1::DeleteSnapshotResponse resp;
    return controller_->DeleteSnapshot(&ctx, req, &resp);
  }

  grpc::Status List(csi::v1::ListSnapshotsRequest req, csi::v1::ListSnapshotsResponse* resp) {
    Secrets(&req);
    grpc::ClientContext ctx;
    return controller_->ListSnapshots(&ctx, req, resp);
  }

  // Stages `volume_id` as a block volume; returns its nbd device.
  std::string StageBlock(const std::string& volume_id) {
    auto req = StageReq(volume_id, BlockCap());
    req.set_staging_target_path(StagingPath(volume_id));
    req.mutable_volume_context()->clear();
    (*req.mutable_volume_context())["clusterID"] = "test";
    (*req.mutable_volume_context())["mounter"] = "rbd-nbd";
    grpc::Status s = Stage(req);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return s.ok() ? StatusField(volume_id, "device") : "";
  }

  std::string ImageOf(const std::string& id, const char* prefix = "csi-vol-") {
    auto decoded = DecodeVolumeId(id);
    return decoded.ok() ? prefix + decoded->object_uuid : "";
  }

  // `program` (rados, rbd) as the test's cephx user, + args.
  static std::vector<std::string> AsUser(const std::string& program, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {program, "-c", Ceph().conf, "--id", Ceph().user, "--keyfile", Ceph().keyfile};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  static std::vector<std::string> Rados(std::vector<std::string> args) {
    args.insert(args.begin(), {"-p", Ceph().pool});
    return AsUser("rados", args);
  }
  static std::vector<std::string> Rbd(const std::vector<std::string>& args) { return AsUser("rbd", args); }
  static void Cli(const std::vector<std::string>& argv) {
    auto out = RunCommand(argv, true);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ(out->exit.code, 0) << argv[0] << " " << argv.back() << ": " << out->stdout_text;
  }

  std::unique_ptr<csi::v1::Controller::Stub> controller_;
  std::shared_ptr<RadosCluster> cluster_;
  std::optional<IoCtx> io_;
};

TEST_F(SnapshotVmTest, RestoreAndCloneHoldExactlyTheirData) {
  const std::string tag = std::to_string(::getpid());
  csi::v1::CreateVolumeResponse source;
  ASSERT_GRPC_OK(Create("pvc-src-" + tag, kGiB, &source));
  const std::string source_id = source.volume().volume_id();
  const std::string device = StageBlock(source_id);
  ASSERT_FALSE(device.empty());

  // Before the snapshot: A at 0 and at 900 MiB. After: B over 4..12 MiB.
  const std::string a = Pattern('a', 8 * kMiB), b = Pattern('b', 8 * kMiB), zeros(4 * kMiB, '\0');
  ASSERT_TRUE(WriteAt(device, 0, a));
  ASSERT_TRUE(WriteAt(device, 900 * kMiB, a));

  auto t0 = std::chrono::steady_clock::now();
  csi::v1::CreateSnapshotResponse snap;
  ASSERT_GRPC_OK(Snap("snap-" + tag, source_id, &snap));
  double snapshot_s = Seconds(t0);
  const csi::v1::Snapshot& s = snap.snapshot();
  EXPECT_TRUE(s.ready_to_use());
  EXPECT_EQ(s.source_volume_id(), source_id);
  EXPECT_EQ(s.size_bytes(), kGiB);
  EXPECT_GT(s.creation_time().seconds(), 0);
  ASSERT_TRUE(WriteAt(device, 4 * kMiB, b));

  // Idempotent by name; the name is taken for any other source.
  csi::v1::CreateSnapshotResponse again;
  ASSERT_GRPC_OK(Snap("snap-" + tag, source_id, &again));
  EXPECT_EQ(again.snapshot().snapshot_id(), s.snapshot_id());

  // ceph-csi's layout: keys, the snapshot image, its RBD snapshot, and no
  // temporary snapshot left on the source.
  auto snap_id = DecodeVolumeId(s.snapshot_id());
  ASSERT_TRUE(snap_id.ok()) << s.snapshot_id();
  const std::string snap_image = "csi-snap-" + snap_id->object_uuid;
  auto dir = AllOmap(*io_, "csi.snaps.default");
  ASSERT_TRUE(dir);
  EXPECT_EQ(dir->at("csi.snap.snap-" + tag), snap_id->object_uuid);
  auto keys = AllOmap(*io_, "csi.snap." + snap_id->object_uuid);
  ASSERT_TRUE(keys);
  EXPECT_EQ(*keys, (std::map<std::string, std::string>{
                       {"csi.snapname", "snap-" + tag}, {"csi.imagename", snap_image}, {"csi.source", ImageOf(source_id)}}));
  EXPECT_TRUE(ImageExists(*io_, snap_image));

  // Restore into a larger volume, stage it: exactly the snapshot's data.
  t0 = std::chrono::steady_clock::now();
  csi::v1::CreateVolumeResponse restored;
  ASSERT_GRPC_OK(Create("pvc-restored-" + tag, 2 * kGiB, &restored, s.snapshot_id()));
  double restore_s = Seconds(t0);
  EXPECT_EQ(restored.volume().capacity_bytes(), 2 * kGiB);
  EXPECT_EQ(restored.volume().content_source().snapshot().snapshot_id(), s.snapshot_id());
  const std::string restored_id = restored.volume().volume_id();
  const std::string restored_device = StageBlock(restored_id);
  ASSERT_FALSE(restored_device.empty());
  EXPECT_TRUE(ReadAt(restored_device, 0, 8 * kMiB) == a) << "snapshot data at 0";
  EXPECT_TRUE(ReadAt(restored_device, 8 * kMiB, 4 * kMiB) == zeros) << "the write after the snapshot leaked";
  EXPECT_TRUE(ReadAt(restored_device, 900 * kMiB, 8 * kMiB) == a);
  EXPECT_TRUE(ReadAt(restored_device, 1536 * kMiB, 4 * kMiB) == zeros) << "the grown part";
  ASSERT_GRPC_OK(Unstage(restored_id));

  // Clone the live volume: its data now (A, then B over 4..12 MiB).
  t0 = std::chrono::steady_clock::now();
  csi::v1::CreateVolumeResponse clone;
  ASSERT_GRPC_OK(Create("pvc-clone-" + tag, kGiB, &clone, "", source_id));
  double clone_s = Seconds(t0);
  const std::string clone_image = ImageOf(clone.volume().volume_id());
  std::string want = a.substr(0, 4 * kMiB) + b;
  EXPECT_TRUE(ReadImage(*io_, clone_image, 0, 12 * kMiB) == want);
  EXPECT_TRUE(ReadImage(*io_, clone_image, 900 * kMiB, 8 * kMiB) == a);
  EXPECT_TRUE(ImageExists(*io_, clone_image + "-temp")) << "ceph-csi's temporary clone";
  std::cout << "timings (1 GiB image, qemu TCG): snapshot " << snapshot_s << " s, restore " << restore_s
            << " s, clone " << clone_s << " s\n";

  // Writes to the source after all that change none of them.
  ASSERT_TRUE(WriteAt(device, 0, b));
  EXPECT_TRUE(ReadImage(*io_, clone_image, 0, 4 * kMiB) == a.substr(0, 4 * kMiB));
  ASSERT_GRPC_OK(Unstage(source_id));

  // The source is deleted first: snapshot and clones keep their data.
  ASSERT_GRPC_OK(DeleteVolume(source_id));
  EXPECT_FALSE(ImageExists(*io_, ImageOf(source_id)));
  EXPECT_TRUE(ReadImage(*io_, clone_image, 0, 4 * kMiB) == a.substr(0, 4 * kMiB));
  EXPECT_TRUE(ReadImage(*io_, ImageOf(restored_id), 900 * kMiB, 8 * kMiB) == a);
  ASSERT_GRPC_OK(DeleteVolume(clone.volume().volume_id()));
  ASSERT_GRPC_OK(DeleteSnap(s.snapshot_id()));
  EXPECT_TRUE(ReadImage(*io_, ImageOf(restored_id), 0, 8 * kMiB) == a);
  ASSERT_GRPC_OK(DeleteVolume(restored_id));
  for (const std::string& image : {ImageOf(source_id), snap_image, clone_image, clone_image + "-temp"}) {
    EXPECT_FALSE(ImageExists(*io_, image)) << image;
    EXPECT_FALSE(Trash(*io_).count(image)) << image << " left in the trash";
  }
  EXPECT_FALSE(AllOmap(*io_, "csi.snap." + snap_id->object_uuid));
}

TEST_F(SnapshotVmTest, CodesTheSanitySuiteExpects) {
  const std::string tag = std::to_string(::getpid());
  csi::v1::CreateVolumeResponse v1, v2;
  ASSERT_GRPC_OK(Create("pvc-codes-1-" + tag, 64 * kMiB, &v1));
  ASSERT_GRPC_OK(Create("pvc-codes-2-" + tag, 64 * kMiB, &v2));
  const std::string id1 = v1.volume().volume_id(), id2 = v2.volume().volume_id();
  csi::v1::CreateSnapshotResponse snap, other;
  ASSERT_GRPC_OK(Snap("snap-codes-" + tag, id1, &snap));
  EXPECT_EQ(Snap("snap-codes-" + tag, id2, &other).error_code(), Code::ALREADY_EXISTS);
  EXPECT_EQ(Snap("", id1, &other).error_code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(Snap("snap-x-" + tag, "", &other).error_code(), Code::INVALID_ARGUMENT);
  auto gone = DecodeVolumeId(id1);
  gone->object_uuid = "00000000-0000-4000-8000-000000000000";
  EXPECT_EQ(Snap("snap-x-" + tag, EncodeVolumeId(*gone), &other).error_code(), Code::NOT_FOUND);
  EXPECT_EQ(Snap("snap-x-" + tag, "not-a-volume", &other).error_code(), Code::NOT_FOUND);

  csi::v1::CreateVolumeResponse vol;
  EXPECT_EQ(Create("pvc-x-" + tag, 64 * kMiB, &vol, EncodeVolumeId(*gone)).error_code(), Code::NOT_FOUND);
  EXPECT_EQ(Create("pvc-x-" + tag, 64 * kMiB, &vol, "", EncodeVolumeId(*gone)).error_code(), Code::NOT_FOUND);
  EXPECT_EQ(Create("pvc-x-" + tag, 32 * kMiB, &vol, snap.snapshot().snapshot_id()).error_code(), Code::OUT_OF_RANGE);

  // ListSnapshots: by ID, by source, everything, pages, foreign tokens.
  csi::v1::CreateSnapshotResponse snap2;
  ASSERT_GRPC_OK(Snap("snap-codes-b-" + tag, id1, &snap2));
  csi::v1::ListSnapshotsRequest req;
  csi::v1::ListSnapshotsResponse resp;
  req.set_snapshot_id(snap.snapshot().snapshot_id());
  ASSERT_GRPC_OK(List(req, &resp));
  ASSERT_EQ(resp.entries_size(), 1);
  EXPECT_EQ(resp.entries(0).snapshot().source_volume_id(), id1);
  EXPECT_TRUE(resp.entries(0).snapshot().ready_to_use());
  req.set_snapshot_id("0001-0004-test-0000000000000001-00000000-0000-4000-8000-000000000000");
  resp.Clear();
  ASSERT_GRPC_OK(List(req, &resp));
  EXPECT_EQ(resp.entries_size(), 0);
  req.Clear();
  req.set_source_volume_id(id1);
  resp.Clear();
  ASSERT_GRPC_OK(List(req, &resp));
  EXPECT_EQ(resp.entries_size(), 2);
  req.set_source_volume_id(id2);
  resp.Clear();
  ASSERT_GRPC_OK(List(req, &resp));
  EXPECT_EQ(resp.entries_size(), 0);
  req.Clear();
  resp.Clear();
  ASSERT_GRPC_OK(List(req, &resp));
  std::set<std::string> all;
  for (const auto& e : resp.entries()) all.insert(e.snapshot().snapshot_id());
  EXPECT_TRUE(all.count(snap.snapshot().snapshot_id()) && all.count(snap2.snapshot().snapshot_id()));
  std::set<std::string> paged;
  req.set_max_entries(1);
  for (int pages = 0; pages < 100; ++pages) {
    resp.Clear();
    ASSERT_GRPC_OK(List(req, &resp));
    ASSERT_LE(resp.entries_size(), 1);
    for (const auto& e : resp.entries()) paged.insert(e.snapshot().snapshot_id());
    if (resp.next_token().empty()) break;
    req.set_starting_token(resp.next_token());
  }
  EXPECT_EQ(paged, all);
  req.set_starting_token("not-a-token");
  EXPECT_EQ(List(req, &resp).error_code(), Code::ABORTED);
  req.set_starting_token("100000");
  EXPECT_EQ(List(req, &resp).error_code(), Code::ABORTED);
  req.Clear();
  req.set_max_entries(-1);
  EXPECT_EQ(List(req, &resp).error_code(), Code::INVALID_ARGUMENT);

  // DeleteSnapshot: repeatable; unknown IDs are OK, an empty one is not.
  ASSERT_GRPC_OK(DeleteSnap(snap.snapshot().snapshot_id()));
  ASSERT_GRPC_OK(DeleteSnap(snap.snapshot().snapshot_id()));
  ASSERT_GRPC_OK(DeleteSnap(snap2.snapshot().snapshot_id()));
  ASSERT_GRPC_OK(DeleteSnap("not-a-snapshot-id"));
  EXPECT_EQ(DeleteSnap("").error_code(), Code::INVALID_ARGUMENT);
  ASSERT_GRPC_OK(DeleteVolume(id1));
  ASSERT_GRPC_OK(DeleteVolume(id2));
  EXPECT_TRUE(Trash(*io_).empty());
}

// Source volume, snapshot and restored volume deleted in all six orders;
// whatever is left keeps its data, and nothing is left at the end.
TEST_F(SnapshotVmTest, DeleteInEveryOrder) {
  const std::string tag = std::to_string(::getpid());
  std::vector<int> order = {0, 1, 2};
  const char* names[] = {"source", "snapshot", "restored"};
  int run = 0;
  do {
    SCOPED_TRACE(std::string(names[order[0]]) + ", " + names[order[1]] + ", " + names[order[2]]);
    const std::string n = tag + "-" + std::to_string(run++);
    csi::v1::CreateVolumeResponse source, restored;
    csi::v1::CreateSnapshotResponse snap;
    ASSERT_GRPC_OK(Create("pvc-o-" + n, 64 * kMiB, &source));
    const std::string data = Pattern('o', kMiB);
    {
      rbd_image_t img = nullptr;
      ASSERT_EQ(rbd_open(io_->get(), ImageOf(source.volume().volume_id()).c_str(), &img, nullptr), 0);
      EXPECT_EQ(rbd_write(img, 0, data.size(), data.data()), static_cast<ssize_t>(data.size()));
      rbd_close(img);
    }
    ASSERT_GRPC_OK(Snap("snap-o-" + n, source.volume().volume_id(), &snap));
    ASSERT_GRPC_OK(Create("pvc-r-" + n, 64 * kMiB, &restored, snap.snapshot().snapshot_id()));
    const std::string images[] = {ImageOf(source.volume().volume_id()),
                                  ImageOf(snap.snapshot().snapshot_id(), "csi-snap-"),
                                  ImageOf(restored.volume().volume_id())};
    bool deleted[3] = {false, false, false};
    for (int which : order) {
      if (which == 0) ASSERT_GRPC_OK(DeleteVolume(source.volume().volume_id()));
      if (which == 1) ASSERT_GRPC_OK(DeleteSnap(snap.snapshot().snapshot_id()));
      if (which == 2) ASSERT_GRPC_OK(DeleteVolume(restored.volume().volume_id()));
      deleted[which] = true;
      for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(ImageExists(*io_, images[i]), !deleted[i]) << images[i];
        if (!deleted[i]) {
          EXPECT_TRUE(ReadImage(*io_, images[i], 0, kMiB) == data) << images[i];
        }
      }
      // The snapshot, while it exists, still restores.
      if (!deleted[1]) {
        csi::v1::CreateVolumeResponse probe;
        ASSERT_GRPC_OK(Create("pvc-p-" + n + std::to_string(which), 64 * kMiB, &probe, snap.snapshot().snapshot_id()));
        EXPECT_TRUE(ReadImage(*io_, ImageOf(probe.volume().volume_id()), 0, kMiB) == data);
        ASSERT_GRPC_OK(DeleteVolume(probe.volume().volume_id()));
      }
    }
    EXPECT_TRUE(Trash(*io_).empty()) << "images left in the RBD trash";
  } while (std::next_permutation(order.begin(), order.end()));
}

// A snapshot as ceph-csi's CreateSnapshot leaves it, made here with the
// `rados` and `rbd` CLIs and none of nbdkeeper's code (ceph-csi's
// internal/journal and internal/rbd: the reservation in csi.snaps.default
// and csi.snap.<uuid>, then source@csi-snap-<uuid> -> clone csi-snap-<uuid>
// (format 2, layering + deep-flatten) -> remove the source's snapshot ->
// snapshot csi-snap-<uuid>@csi-snap-<uuid>): nbdkeeper lists it with its
// source, restores it with the source's data, and deletes it leaving nothing.
TEST_F(SnapshotVmTest, ASnapshotCephCsiMadeIsListedRestoredAndDeleted) {
  const std::string tag = std::to_string(::getpid());
  csi::v1::CreateVolumeResponse source;
  ASSERT_GRPC_OK(Create("pvc-cephcsi-src-" + tag, 64 * kMiB, &source));
  const std::string source_id = source.volume().volume_id();
  const std::string source_image = ImageOf(source_id);
  const std::string data = Pattern('c', kMiB);
  ASSERT_TRUE(WriteImage(*io_, source_image, 0, data));

  const std::string uuid = "5e1ec7ed-0000-4000-8000-" + std::string(12 - tag.size(), '0') + tag;
  const std::string name = "snapshot-cephcsi-" + tag, snap_image = "csi-snap-" + uuid;
  const std::string spec = Ceph().pool + "/" + snap_image;
  ASSERT_NO_FATAL_FAILURE(Cli(Rados({"setomapval", "csi.snaps.default", "csi.snap." + name, uuid})));
  ASSERT_NO_FATAL_FAILURE(Cli(Rados({"setomapval", "csi.snap." + uuid, "csi.snapname", name})));
  ASSERT_NO_FATAL_FAILURE(Cli(Rados({"setomapval", "csi.snap." + uuid, "csi.imagename", snap_image})));
  ASSERT_NO_FATAL_FAILURE(Cli(Rados({"setomapval", "csi.snap." + uuid, "csi.source", source_image})));
  const std::string temp = Ceph().pool + "/" + source_image + "@" + snap_image;
  ASSERT_NO_FATAL_FAILURE(Cli(Rbd({"snap", "create", temp})));
  ASSERT_NO_FATAL_FAILURE(
      Cli(Rbd({"clone", "--rbd-default-clone-format", "2", "--image-feature", "layering,deep-flatten", temp, spec})));
  ASSERT_NO_FATAL_FAILURE(Cli(Rbd({"snap", "rm", temp})));
  ASSERT_NO_FATAL_FAILURE(Cli(Rbd({"snap", "create", spec + "@" + snap_image})));
  auto pool_id = cluster_->PoolId(Ceph().pool);
  ASSERT_TRUE(pool_id.ok()) << pool_id.status().ToString();
  const std::string snapshot_id = EncodeVolumeId({1, "test", *pool_id, uuid});

  csi::v1::ListSnapshotsRequest by_id;
  by_id.set_snapshot_id(snapshot_id);
  csi::v1::ListSnapshotsResponse listed;
  ASSERT_GRPC_OK(List(by_id, &listed));
  ASSERT_EQ(listed.entries_size(), 1);
  EXPECT_EQ(listed.entries(0).snapshot().source_volume_id(), source_id);
  EXPECT_EQ(listed.entries(0).snapshot().size_bytes(), 64 * kMiB);
  EXPECT_TRUE(listed.entries(0).snapshot().ready_to_use());
  csi::v1::ListSnapshotsRequest by_source;
  by_source.set_source_volume_id(source_id);
  ASSERT_GRPC_OK(List(by_source, &listed));
  ASSERT_EQ(listed.entries_size(), 1);
  EXPECT_EQ(listed.entries(0).snapshot().snapshot_id(), snapshot_id);

  // The source changes after the snapshot: the restore has the old data.
  ASSERT_TRUE(WriteImage(*io_, source_image, 0, Pattern('d', kMiB)));
  csi::v1::CreateVolumeResponse restored;
  ASSERT_GRPC_OK(Create("pvc-cephcsi-restored-" + tag, 128 * kMiB, &restored, snapshot_id));
  EXPECT_EQ(restored.volume().capacity_bytes(), 128 * kMiB);
  EXPECT_TRUE(ReadImage(*io_, ImageOf(restored.volume().volume_id()), 0, kMiB) == data);

  ASSERT_GRPC_OK(DeleteVolume(restored.volume().volume_id()));
  ASSERT_GRPC_OK(DeleteSnap(snapshot_id));
  EXPECT_FALSE(ImageExists(*io_, snap_image));
  auto directory = AllOmap(*io_, "csi.snaps.default");
  EXPECT_TRUE(!directory || directory->count("csi.snap." + name) == 0) << "the name's reservation is left";
  EXPECT_FALSE(AllOmap(*io_, "csi.snap." + uuid).has_value()) << "the snapshot's omap object is left";
  ASSERT_GRPC_OK(DeleteVolume(source_id));
  EXPECT_TRUE(Trash(*io_).empty()) << "images left in the RBD trash";
}

}  // namespace
}  // namespace nbdk::vmtest
