// VM test (real Ceph): a crash between any two RBD steps of CreateSnapshot,
// CreateVolume from a snapshot and CreateVolume from a volume. For every
// k = 0..steps the state a crash after step k leaves is made (the omap
// reservation as the operation makes it, then the first k of the
// operation's own step list, csi/controller/rbd_steps.h); then
//  - a retry through the public BLOCKING function must succeed with the
//    reserved ID and leave what a clean run leaves (images, parents,
//    snapshots, omap keys, the source's data);
//  - a delete of a second such state must leave nothing of it (no image, no
//    RBD trash entry, no snapshot on the source, no omap keys) and the
//    source intact.
//
// Needs test/vm's CEPH_CONF, NBDK_CEPH_POOL, NBDK_CEPH_ID, NBDK_CEPH_KEY_FILE.
// One connection for the whole binary; 8 MiB images.
#include <gtest/gtest.h>
#include <rbd/features.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "csi/controller/clone_operations.h"
#include "csi/controller/controller_operations.h"
#include "csi/controller/snapshot_operations.h"
#include "ceph/omap_store.h"
#include "ceph/rados_config.h"
#include "ceph/rbd_clone.h"
#include "ceph/rbd_image.h"
#include "csi/controller/omap_volume_journal.h"
#include "journal/volume_id.h"
#include "test/csi/controller/controller_vm_helpers.h"

namespace nbdk::vmtest {
namespace {

constexpr int64_t kMiB = 1 << 20;
constexpr int64_t kSourceBytes = 8 * kMiB;
constexpr int64_t kCloneBytes = 16 * kMiB;  // larger than the source: the grow step does something
constexpr char kClusterId[] = "crash-test";
constexpr int64_t kDataOffset = 5 * kMiB;   // where the source's data is, in its second object

enum class Operation { kSnapshot, kRestore, kClone };
const char* OperationName(Operation op) {
  return op == Operation::kSnapshot ? "CreateSnapshot" : op == Operation::kRestore ? "restore" : "clone";
}

// A crash state: what the reservation made and how far the steps got.
struct Crash {
  VolumeReservation reservation;
  std::string id;     // the ID the operation returns for the reservation
  size_t steps = 0;   // the number of steps of the operation
  std::string trace;  // "CreateSnapshot: crash after step 2 of 5 (clone ...)"
};

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The snapshots of `image`: the user's, or (`user_only` false) also those
// in librbd's trash namespace (removed, kept for their clones, named by a
// uuid).
std::set<std::string> Snapshots(IoCtx& io, const std::string& image, bool user_only) {
  std::set<std::string> out;
  rbd_image_t img = nullptr;
  if (rbd_open_read_only(io.get(), image.c_str(), &img, nullptr) != 0) return out;
  std::vector<rbd_snap_info_t> snaps(32);
  int max = static_cast<int>(snaps.size());
  int n = rbd_snap_list(img, snaps.data(), &max);
  for (int i = 0; i < n; ++i) {
    rbd_snap_namespace_type_t type = RBD_SNAP_NAMESPACE_TYPE_USER;
    rbd_snap_get_namespace_type(img, snaps[i].id, &type);
    if (!user_only || type == RBD_SNAP_NAMESPACE_TYPE_USER) out.insert(snaps[i].name);
  }
  if (n > 0) rbd_snap_list_end(snaps.data());
  rbd_close(img);
  return out;
}

std::set<std::string> UserSnapshots(IoCtx& io, const std::string& image) { return Snapshots(io, image, true); }

std::string ParentName(IoCtx& io, const std::string& image) {
  auto info = StatImage(io, image);
  return info.ok() && info->parent ? info->parent->image_name : "";
}

class RbdStepCrashVmTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ImageSpec spec;
    spec.ceph_conf = Env("CEPH_CONF");
    spec.user_id = Env("NBDK_CEPH_ID");
    spec.keyfile = Env("NBDK_CEPH_KEY_FILE");
    pool_ = Env("NBDK_CEPH_POOL");
    ASSERT_FALSE(spec.ceph_conf.empty() || pool_.empty() || spec.user_id.empty() || spec.keyfile.empty())
        << "run inside the test VM: CEPH_CONF, NBDK_CEPH_POOL, NBDK_CEPH_ID, NBDK_CEPH_KEY_FILE";
    auto cluster = RadosCluster::ConnectBlocking(RadosConfigForImage(spec, 30));
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = *cluster;
    auto io = IoCtx::Open(cluster_, pool_, "");
    ASSERT_TRUE(io.ok()) << io.status().ToString();
    io_.emplace(std::move(*io));
    auto pool_id = cluster_->PoolId(pool_);
    ASSERT_TRUE(pool_id.ok()) << pool_id.status().ToString();
    pool_id_ = *pool_id;
    prefix_ = "crash" + std::to_string(getpid()) + "-";

    auto source = CreateVolumeBlocking(cluster_, VolumeParams("source", kSourceBytes, {}), "");
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    source_ = Ref(source->volume_id);
    source_image_ = source->context["imageName"];
    ASSERT_FALSE(source_image_.empty());
    data_ = std::string(64 * 1024, '\0');
    for (size_t i = 0; i < data_.size(); ++i) data_[i] = static_cast<char>(i * 7 + i / 4096);
    ASSERT_TRUE(WriteImage(*io_, source_image_, 0, data_));
    ASSERT_TRUE(WriteImage(*io_, source_image_, kDataOffset, data_));

    auto snapshot = CreateSnapshotBlocking(cluster_, {prefix_ + "base-snap", Ref(source_.volume_id)}, "");
    ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    snapshot_ = Ref(snapshot->snapshot_id);
    // The base snapshot's temporary snapshot, in the trash namespace.
    source_snapshots_ = Snapshots(*io_, source_image_, false);
  }

  static void TearDownTestSuite() {
    if (!snapshot_.volume_id.empty()) {
      EXPECT_TRUE(DeleteSnapshotBlocking(cluster_, snapshot_, "").ok());
    }
    if (!source_.volume_id.empty()) {
      EXPECT_TRUE(DeleteVolumeBlocking(cluster_, source_, "").ok());
    }
    io_.reset();
    cluster_.reset();
  }

  static VolumeRef Ref(const std::string& id) {
    auto decoded = DecodeVolumeId(id);
    EXPECT_TRUE(decoded.ok()) << id;
    return VolumeRef{id, decoded.ok() ? *decoded : VolumeId{}, {}};
  }

  static CreateVolumeParams VolumeParams(const std::string& name, int64_t bytes, ContentSource source) {
    CreateVolumeParams p;
    p.name = prefix_ + name;
    p.size_bytes = bytes;
    p.cluster_id = kClusterId;
    p.pool = pool_;
    p.image_options.features = RBD_FEATURE_LAYERING;
    p.source = std::move(source);
    return p;
  }

  static CreateVolumeParams CloneParams(Operation op, const std::string& name) {
    const VolumeRef& from = op == Operation::kRestore ? snapshot_ : source_;
    auto kind = op == Operation::kRestore ? ContentSource::Kind::kSnapshot : ContentSource::Kind::kVolume;
    return VolumeParams(name, kCloneBytes, {kind, from.volume_id, from.decoded});
  }

  static std::string SnapshotImage() { return "csi-snap-" + snapshot_.decoded.object_uuid; }

  // The state a crash after `k` steps of `op` leaves for request `name`.
  Crash CrashAfter(Operation op, const std::string& name, size_t k) {
    Crash out;
    RadosOmapStore store(*io_);
    std::vector<RbdStep> steps;
    std::optional<ResolvedSource> resolved;
    if (op == Operation::kSnapshot) {
      VolumeJournal journal(store, store, {pool_id_, pool_id_}, kDefaultJournalInstance, RandomUuid,
                            kSnapshotJournalNames);
      auto reserved = journal.Reserve(prefix_ + name, "", source_image_);
      EXPECT_TRUE(reserved.ok()) << reserved.status().ToString();
      if (!reserved.ok()) return out;
      out.reservation = *reserved;
      steps = SnapshotImageSteps(cluster_, *io_, source_image_, reserved->image_name);
    } else {
      CreateVolumeParams params = CloneParams(op, name);
      auto source = ResolveContentSource(cluster_, params.source, params.size_bytes, "");
      EXPECT_TRUE(source.ok()) << source.status().ToString();
      if (!source.ok()) return out;
      resolved.emplace(std::move(*source));
      VolumeJournal journal(store, store, {pool_id_, pool_id_}, kDefaultJournalInstance, RandomUuid);
      auto reserved = journal.Reserve(params.name, params.image_name, RecordedSource(params.source));
      EXPECT_TRUE(reserved.ok()) << reserved.status().ToString();
      if (!reserved.ok()) return out;
      out.reservation = *reserved;
      steps = VolumeImageSteps(cluster_, *io_, reserved->image_name, params, *resolved);
    }
    out.id = EncodeVolumeId({1, kClusterId, pool_id_, out.reservation.uuid});
    out.steps = steps.size();
    out.trace = std::string(OperationName(op)) + ": crash after step " + std::to_string(k) + " of " +
                std::to_string(steps.size()) + (k > 0 ? " (" + steps[k - 1].name + ")" : " (the reservation)");
    for (size_t i = 0; i < k && i < steps.size(); ++i) {
      Status s = steps[i].run();
      EXPECT_TRUE(s.ok()) << "step " << steps[i].name << ": " << s.ToString();
    }
    return out;  // the steps, journal and resolved source are dropped, as by a crash
  }

  // The source volume as the test made it: its data, no user snapshots.
  void ExpectSourceIntact() {
    EXPECT_EQ(ReadImage(*io_, source_image_, 0, data_.size()), data_) << "source data";
    EXPECT_EQ(ReadImage(*io_, source_image_, kDataOffset, data_.size()), data_) << "source data";
    EXPECT_EQ(UserSnapshots(*io_, source_image_), std::set<std::string>()) << "snapshots on " << source_image_;
  }

  void ExpectData(const std::string& image) {
    EXPECT_EQ(ReadImage(*io_, image, 0, data_.size()), data_) << "data of " << image;
    EXPECT_EQ(ReadImage(*io_, image, kDataOffset, data_.size()), data_) << "data of " << image;
  }

  // The journal entry of `name` (one of the two journals) is `uuid`'s, or
  // (uuid "") there is none.
  void ExpectJournal(const JournalNames& names, const std::string& name, const std::string& uuid) {
    auto dir = AllOmap(*io_, DirectoryObject(names, kDefaultJournalInstance));
    auto object = AllOmap(*io_, JournalObject(names, uuid.empty() ? "x" : uuid));
    bool keyed = dir && dir->count(DirectoryKey(names, prefix_ + name));
    if (uuid.empty()) {
      EXPECT_FALSE(keyed) << "directory key of " << name << " left";
      return;
    }
    ASSERT_TRUE(keyed) << "no directory key of " << name;
    EXPECT_EQ(dir->at(DirectoryKey(names, prefix_ + name)), uuid);
    ASSERT_TRUE(object) << "no " << JournalObject(names, uuid);
    EXPECT_EQ(object->at(names.request_name_key), prefix_ + name);
  }

  // Nothing of `images` and of the journal entries of `name`/`uuid` is left.
  void ExpectGone(const JournalNames& names, const std::string& name, const std::string& uuid,
                  const std::vector<std::string>& images) {
    std::set<std::string> trash = Trash(*io_);
    for (const std::string& image : images) {
      EXPECT_FALSE(ImageExists(*io_, image)) << image << " left";
      EXPECT_EQ(trash.count(image), 0u) << image << " left in the RBD trash";
    }
    ExpectJournal(names, name, "");
    EXPECT_FALSE(AllOmap(*io_, JournalObject(names, uuid))) << JournalObject(names, uuid) << " left";
    ExpectSourceIntact();
    EXPECT_EQ(Snapshots(*io_, source_image_, false), source_snapshots_) << "trashed snapshots on " << source_image_;
  }

  void RetrySnapshot(const std::string& name, size_t k, size_t* steps) {
    Crash crash = CrashAfter(Operation::kSnapshot, name, k);
    SCOPED_TRACE(crash.trace);
    *steps = crash.steps;
    const std::string image = crash.reservation.image_name;
    auto made = CreateSnapshotBlocking(cluster_, {prefix_ + name, Ref(source_.volume_id)}, "");
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    EXPECT_EQ(made->snapshot_id, crash.id);
    EXPECT_EQ(made->size_bytes, kSourceBytes);
    EXPECT_EQ(ParentName(*io_, image), source_image_);
    EXPECT_EQ(UserSnapshots(*io_, image), std::set<std::string>{image});
    ExpectData(image);
    ExpectSourceIntact();
    ExpectJournal(kSnapshotJournalNames, name, crash.reservation.uuid);
    auto attrs = AllOmap(*io_, JournalObject(kSnapshotJournalNames, crash.reservation.uuid));
    ASSERT_TRUE(attrs);
    EXPECT_EQ((*attrs)[kSourceKey], source_image_);
    EXPECT_TRUE(DeleteSnapshotBlocking(cluster_, Ref(crash.id), "").ok());
    ExpectGone(kSnapshotJournalNames, name, crash.reservation.uuid, {image});
  }

  void DeleteSnapshot(const std::string& name, size_t k) {
    Crash crash = CrashAfter(Operation::kSnapshot, name, k);
    SCOPED_TRACE(crash.trace);
    Status deleted = DeleteSnapshotBlocking(cluster_, Ref(crash.id), "");
    EXPECT_TRUE(deleted.ok()) << deleted.ToString();
    ExpectGone(kSnapshotJournalNames, name, crash.reservation.uuid, {crash.reservation.image_name});
  }

  void RetryVolume(Operation op, const std::string& name, size_t k, size_t* steps) {
    Crash crash = CrashAfter(op, name, k);
    SCOPED_TRACE(crash.trace);
    *steps = crash.steps;
    const std::string image = crash.reservation.image_name;
    const std::string temp = TemporaryCloneName(image);
    auto made = CreateVolumeBlocking(cluster_, CloneParams(op, name), "");
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    EXPECT_EQ(made->volume_id, crash.id);
    auto size = ImageSize(*io_, image);
    EXPECT_TRUE(size.ok() && *size && **size == static_cast<uint64_t>(kCloneBytes)) << "size of " << image;
    EXPECT_EQ(UserSnapshots(*io_, image), std::set<std::string>());
    if (op == Operation::kRestore) {
      EXPECT_EQ(ParentName(*io_, image), SnapshotImage());
      EXPECT_FALSE(ImageExists(*io_, temp)) << temp;
    } else {
      EXPECT_EQ(ParentName(*io_, image), temp);
      EXPECT_EQ(ParentName(*io_, temp), source_image_);
      EXPECT_EQ(UserSnapshots(*io_, temp), std::set<std::string>());
    }
    ExpectData(image);
    ExpectSourceIntact();
    ExpectJournal(kVolumeJournalNames, name, crash.reservation.uuid);
    auto attrs = AllOmap(*io_, JournalObject(kVolumeJournalNames, crash.reservation.uuid));
    ASSERT_TRUE(attrs);
    EXPECT_EQ((*attrs)[kSourceKey], op == Operation::kClone ? source_.volume_id : "");
    EXPECT_TRUE(DeleteVolumeBlocking(cluster_, Ref(crash.id), "").ok());
    ExpectGone(kVolumeJournalNames, name, crash.reservation.uuid, {image, temp});
  }

  void DeleteVolume(Operation op, const std::string& name, size_t k) {
    Crash crash = CrashAfter(op, name, k);
    SCOPED_TRACE(crash.trace);
    const std::string image = crash.reservation.image_name;
    Status deleted = DeleteVolumeBlocking(cluster_, Ref(crash.id), "");
    EXPECT_TRUE(deleted.ok()) << deleted.ToString();
    ExpectGone(kVolumeJournalNames, name, crash.reservation.uuid, {image, TemporaryCloneName(image)});
    // The snapshot restored from still serves restores.
    EXPECT_EQ(UserSnapshots(*io_, SnapshotImage()), std::set<std::string>{SnapshotImage()});
  }

  void EveryCrashPoint(Operation op) {
    size_t steps = 1;
    for (size_t k = 0; k <= steps; ++k) {
      const std::string name = std::string(OperationName(op)) + "-" + std::to_string(k);
      if (op == Operation::kSnapshot) {
        RetrySnapshot(name + "-retry", k, &steps);
        DeleteSnapshot(name + "-delete", k);
      } else {
        RetryVolume(op, name + "-retry", k, &steps);
        DeleteVolume(op, name + "-delete", k);
      }
    }
    EXPECT_GT(steps, 1u);
  }

  static inline std::shared_ptr<RadosCluster> cluster_;
  static inline std::optional<IoCtx> io_;
  static inline std::string pool_;
  static inline int64_t pool_id_ = 0;
  static inline std::string prefix_;
  static inline VolumeRef source_;
  static inline std::string source_image_;
  static inline VolumeRef snapshot_;
  static inline std::string data_;
  static inline std::set<std::string> source_snapshots_;  // after SetUpTestSuite, every namespace
};

TEST_F(RbdStepCrashVmTest, CreateSnapshot) { EveryCrashPoint(Operation::kSnapshot); }
TEST_F(RbdStepCrashVmTest, CreateVolumeFromSnapshot) { EveryCrashPoint(Operation::kRestore); }
TEST_F(RbdStepCrashVmTest, CreateVolumeFromVolume) { EveryCrashPoint(Operation::kClone); }

}  // namespace
}  // namespace nbdk::vmtest
