// The fixture of rbd_step_crash_vm_test.cc (VM, real Ceph): one connection,
// two source volumes with data and a snapshot each - one plain, one
// encrypted with a metadata KMS (its state set to "encrypted", as after a
// Node's first format) - and what a crash after k steps of an operation
// leaves: the omap reservation as the operation makes it, then the first k
// of the operation's own step list (csi/controller/rbd_steps.h), encryption
// steps included.
//
// Needs test/vm's CEPH_CONF, NBDK_CEPH_POOL, NBDK_CEPH_ID, NBDK_CEPH_KEY_FILE.
#pragma once

#include <gtest/gtest.h>
#include <rbd/features.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ceph/omap_store.h"
#include "ceph/rados_config.h"
#include "ceph/rbd_clone.h"
#include "ceph/rbd_image.h"
#include "csi/controller/clone_operations.h"
#include "csi/controller/controller_operations.h"
#include "csi/controller/omap_volume_journal.h"
#include "csi/controller/snapshot_operations.h"
#include "csi/controller/volume_encryption.h"
#include "journal/volume_id.h"
#include "test/csi/controller/controller_vm_helpers.h"

namespace nbdk::vmtest {

inline constexpr int64_t kCrashMiB = 1 << 20;
inline constexpr int64_t kSourceBytes = 8 * kCrashMiB;
inline constexpr int64_t kCloneBytes = 16 * kCrashMiB;  // larger than the source: the grow step does something
inline constexpr char kClusterId[] = "crash-test";
inline constexpr int64_t kDataOffset = 5 * kCrashMiB;  // where the source's data is, in its second object
inline constexpr char kCrashKmsId[] = "secrets-metadata";
inline constexpr char kCrashSecret[] = "crash-test-encryptionPassphrase";

enum class Operation { kSnapshot, kRestore, kClone };
inline const char* OperationName(Operation op) {
  return op == Operation::kSnapshot ? "CreateSnapshot" : op == Operation::kRestore ? "restore" : "clone";
}

// A crash state: what the reservation made and how far the steps got.
struct Crash {
  VolumeReservation reservation;
  std::string id;     // the ID the operation returns for the reservation
  size_t steps = 0;   // the number of steps of the operation
  std::string trace;  // "CreateSnapshot: crash after step 2 of 5 (clone ...)"
};

// A volume the operations start from.
struct CrashSource {
  std::string volume_id;
  std::string image;
  std::string snapshot_id;            // a snapshot of it, to restore from
  std::optional<std::string> kms_id;  // nullopt: not encrypted
  std::set<std::string> snapshots;    // on it after the setup, every namespace
};

inline std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The snapshots of `image`: the user's, or (`user_only` false) also those
// in librbd's trash namespace (removed, kept for their clones, named by a
// uuid).
inline std::set<std::string> Snapshots(IoCtx& io, const std::string& image, bool user_only) {
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

inline std::set<std::string> UserSnapshots(IoCtx& io, const std::string& image) { return Snapshots(io, image, true); }

inline std::string ParentName(IoCtx& io, const std::string& image) {
  auto info = StatImage(io, image);
  return info.ok() && info->parent ? info->parent->image_name : "";
}

// The test's KMS config: the metadata KMS and the built-in one.
inline KmsResolver CrashKms() {
  return [](std::string_view kms_id) -> Result<KmsSettings> {
    return KmsSettings{std::string(kms_id), kms_id == kDefaultKmsId ? KmsType::kDefault : KmsType::kMetadata};
  };
}

class RbdStepCrashFixture : public ::testing::Test {
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
    data_ = std::string(64 * 1024, '\0');
    for (size_t i = 0; i < data_.size(); ++i) data_[i] = static_cast<char>(i * 7 + i / 4096);
    MakeSource("source", std::nullopt, &plain_);
    MakeSource("encrypted-source", kCrashKmsId, &encrypted_);
  }

  static void TearDownTestSuite() {
    for (const CrashSource* src : {&plain_, &encrypted_}) {
      if (!src->snapshot_id.empty()) {
        EXPECT_TRUE(DeleteSnapshotBlocking(cluster_, Ref(src->snapshot_id), "").ok());
      }
      if (!src->volume_id.empty()) {
        EXPECT_TRUE(DeleteVolumeBlocking(cluster_, Ref(src->volume_id), "").ok());
      }
    }
    io_.reset();
    cluster_.reset();
  }

  static void MakeSource(const std::string& name, const std::optional<std::string>& kms_id, CrashSource* out) {
    CreateVolumeParams params = VolumeParams(name, kSourceBytes, {}, kms_id);
    auto made = CreateVolumeBlocking(cluster_, params, "", VolumeKms(kms_id), CrashKms());
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    out->volume_id = made->volume_id;
    out->image = made->context["imageName"];
    out->kms_id = kms_id;
    ASSERT_FALSE(out->image.empty());
    ASSERT_TRUE(WriteImage(*io_, out->image, 0, data_));
    ASSERT_TRUE(WriteImage(*io_, out->image, kDataOffset, data_));
    // As after a Node's first luksFormat: the copies must carry this state.
    if (kms_id) {
      ASSERT_TRUE(SetImageMetadata(*io_, out->image, {{kEncryptionStateKey, "encrypted"}}).ok());
    }
    auto snapshot =
        CreateSnapshotBlocking(cluster_, {prefix_ + name + "-snap", Ref(out->volume_id, kms_id)}, "", CrashKms());
    ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    out->snapshot_id = snapshot->snapshot_id;
    // The snapshot's temporary snapshot, in the trash namespace.
    out->snapshots = Snapshots(*io_, out->image, false);
  }

  // A reference to `id`, with the secret when `kms_id` is set.
  static VolumeRef Ref(const std::string& id, const std::optional<std::string>& kms_id = std::nullopt) {
    auto decoded = DecodeVolumeId(id);
    EXPECT_TRUE(decoded.ok()) << id;
    VolumeRef ref{id, decoded.ok() ? *decoded : VolumeId{}, {}};
    if (kms_id) ref.secrets.encryption_passphrase = SecretBytes::CopyOf(kCrashSecret);
    return ref;
  }

  static std::optional<KmsSettings> VolumeKms(const std::optional<std::string>& kms_id) {
    if (!kms_id) return std::nullopt;
    return *CrashKms()(*kms_id);
  }

  static CreateVolumeParams VolumeParams(const std::string& name, int64_t bytes, ContentSource source,
                                         const std::optional<std::string>& kms_id) {
    CreateVolumeParams p;
    p.name = prefix_ + name;
    p.size_bytes = bytes;
    p.cluster_id = kClusterId;
    p.pool = pool_;
    p.image_options.features = RBD_FEATURE_LAYERING;
    p.source = std::move(source);
    p.encryption_kms_id = kms_id;
    if (kms_id) p.secrets.encryption_passphrase = SecretBytes::CopyOf(kCrashSecret);
    return p;
  }

  static CreateVolumeParams CloneParams(Operation op, const CrashSource& src, const std::string& name) {
    const std::string& from = op == Operation::kRestore ? src.snapshot_id : src.volume_id;
    auto kind = op == Operation::kRestore ? ContentSource::Kind::kSnapshot : ContentSource::Kind::kVolume;
    return VolumeParams(name, kCloneBytes, {kind, from, *DecodeVolumeId(from)}, src.kms_id);
  }

  static std::string SnapshotImage(const CrashSource& src) {
    return "csi-snap-" + DecodeVolumeId(src.snapshot_id)->object_uuid;
  }

  // The state a crash after `k` steps of `op` from `src` leaves for request
  // `name`.
  Crash CrashAfter(Operation op, const CrashSource& src, const std::string& name, size_t k) {
    Crash out;
    RadosOmapStore store(*io_);
    std::vector<RbdStep> steps;
    std::optional<ResolvedSource> resolved;
    CreateSnapshotParams snapshot_params{prefix_ + name, Ref(src.volume_id, src.kms_id)};
    CreateVolumeParams volume_params = CloneParams(op, src, name);
    const JournalEncryption encryption = JournalEncryptionFor(src.kms_id);
    if (op == Operation::kSnapshot) {
      VolumeJournal journal(store, store, {pool_id_, pool_id_}, kDefaultJournalInstance, RandomUuid,
                            kSnapshotJournalNames);
      auto reserved = journal.Reserve(prefix_ + name, "", src.image, "", encryption);
      EXPECT_TRUE(reserved.ok()) << reserved.status().ToString();
      if (!reserved.ok()) return out;
      out.reservation = *reserved;
      out.id = EncodeVolumeId({1, kClusterId, pool_id_, out.reservation.uuid});
      auto copy = SnapshotEncryptionSteps(*io_, snapshot_params, src.image, reserved->image_name, out.id,
                                          VolumeKms(src.kms_id));
      steps = SnapshotImageSteps(cluster_, *io_, src.image, reserved->image_name, copy);
    } else {
      auto source = ResolveContentSource(cluster_, volume_params.source, volume_params.size_bytes, "");
      EXPECT_TRUE(source.ok()) << source.status().ToString();
      if (!source.ok()) return out;
      resolved.emplace(std::move(*source));
      auto plan = PlanVolumeEncryption(volume_params, VolumeKms(src.kms_id), resolved->encryption, CrashKms());
      EXPECT_TRUE(plan.ok()) << plan.status().ToString();
      if (!plan.ok()) return out;
      VolumeJournal journal(store, store, {pool_id_, pool_id_}, kDefaultJournalInstance, RandomUuid);
      auto reserved = journal.Reserve(volume_params.name, volume_params.image_name,
                                      RecordedSource(volume_params.source), "", encryption);
      EXPECT_TRUE(reserved.ok()) << reserved.status().ToString();
      if (!reserved.ok()) return out;
      out.reservation = *reserved;
      out.id = EncodeVolumeId({1, kClusterId, pool_id_, out.reservation.uuid});
      auto copy = VolumeEncryptionSteps(*io_, reserved->image_name, out.id, volume_params, *resolved, *plan);
      steps = VolumeImageSteps(cluster_, *io_, reserved->image_name, volume_params, *resolved, copy);
    }
    out.steps = steps.size();
    out.trace = std::string(OperationName(op)) + (src.kms_id ? " (encrypted)" : "") + ": crash after step " +
                std::to_string(k) + " of " + std::to_string(steps.size()) +
                (k > 0 ? " (" + steps[k - 1].name + ")" : " (the reservation)");
    for (size_t i = 0; i < k && i < steps.size(); ++i) {
      Status s = steps[i].run();
      EXPECT_TRUE(s.ok()) << "step " << steps[i].name << ": " << s.ToString();
    }
    return out;  // the steps, journal and resolved source are dropped, as by a crash
  }

  static inline std::shared_ptr<RadosCluster> cluster_;
  static inline std::optional<IoCtx> io_;
  static inline std::string pool_;
  static inline int64_t pool_id_ = 0;
  static inline std::string prefix_;
  static inline std::string data_;
  static inline CrashSource plain_;
  static inline CrashSource encrypted_;
};

}  // namespace nbdk::vmtest
