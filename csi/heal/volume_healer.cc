#include "csi/heal/volume_healer.h"

#include <memory>
#include <optional>
#include <vector>

#include "base/log.h"
#include "base/uv_handle.h"
#include "csi/mount_flags.h"
#include "host/mount_table.h"

namespace nbdk {
namespace {

constexpr uint64_t kSettlePollMs = 50;

// The state shared by every volume's healing; `done` runs when the last
// volume finished.
struct HealRun {
  NodeContext& node;
  HealOptions options;
  std::function<void(HealSummary)> done;
  HealSummary summary;
  size_t pending = 0;
  uint64_t started_ms = 0;

  void Finished() {
    if (--pending > 0) return;
    summary.elapsed_ms = node.loop.NowMs() - started_ms;
    NBDK_LOG_INFO("healed", {{"volumes", summary.volumes},
                             {"adopted", summary.adopted},
                             {"reattached", summary.reattached},
                             {"expired", summary.expired},
                             {"stale_boot", summary.stale_boot},
                             {"skipped", summary.skipped},
                             {"left_alone", summary.left_alone},
                             {"remounted", summary.remounted},
                             {"failures", summary.failures},
                             {"ms", summary.elapsed_ms}});
    auto cb = std::move(done);
    cb(summary);
  }
};

AdoptRequest RequestFor(const VolumeRecord& r, int pid) {
  AdoptRequest a;
  a.map.volume_id = r.volume_id;
  a.map.image = RecordedImage(r);
  a.map.read_only = r.read_only;
  a.map.map_options = r.map_options;
  a.map.cookie = r.cookie;
  a.map.multi_node = r.multi_node;
  a.map.own_clients = r.rbd_clients;
  a.map.clients_before_server = r.rbd_clients_before;
  a.device = r.nbd_device;
  a.pid = pid;
  return a;
}

// One volume: dispatch its plan, then journal and remount as needed.
class VolumeHeal : public std::enable_shared_from_this<VolumeHeal> {
 public:
  VolumeHeal(std::shared_ptr<HealRun> run, VolumeRecord record, HealPlan plan, std::optional<VolumeOpLock> lock)
      : run_(std::move(run)), record_(std::move(record)), plan_(std::move(plan)), lock_(std::move(lock)) {}

  void Start() {
    Log(plan_.action == HealAction::kExpired ? LogLevel::kWarn : LogLevel::kInfo, "heal_decision",
        {{"volume", record_.volume_id},
         {"decision", HealActionName(plan_.action)},
         {"device", record_.nbd_device},
         {"pid", plan_.pid},
         {"reason", plan_.reason}});
    Supervisor& sup = run_->node.supervisor;
    HealSummary& sum = run_->summary;
    switch (plan_.action) {
      case HealAction::kAdopt:
        ++sum.adopted;
        if (!Check(sup.Adopt(RequestFor(record_, plan_.pid)), "adopt")) return Finish();
        return JournalPid();
      case HealAction::kReattach:
        ++sum.reattached;
        if (!Check(sup.Reattach(RequestFor(record_, 0), "healing: " + plan_.reason), "re-attach")) return Finish();
        return WaitSettled();
      case HealAction::kExpired:
        ++sum.expired;
        if (!Check(sup.AdoptExpired(RequestFor(record_, 0), plan_.reason), "mark expired")) return Finish();
        return JournalPid();
      case HealAction::kStaleBoot:
        ++sum.stale_boot;
        break;
      case HealAction::kSkip:
        ++sum.skipped;
        break;
      case HealAction::kUnknownServer:
        ++sum.left_alone;
        break;
    }
    Finish();
  }

 private:
  bool Check(const Status& s, const char* step) {
    if (s.ok()) return true;
    ++run_->summary.failures;
    NBDK_LOG_ERROR("heal_failed", {{"volume", record_.volume_id}, {"step", step}, {"error", s.ToString()}});
    return false;
  }

  // A re-attach finishes on its own time; mounts need a serving device.
  void WaitSettled() {
    uint64_t deadline = run_->node.loop.NowMs() + run_->options.attach_wait_ms;
    timer_ = std::make_unique<Timer>(run_->node.loop);
    auto self = shared_from_this();
    timer_->Start(0, kSettlePollMs, [self, deadline] {
      auto snap = self->run_->node.supervisor.Snapshot(self->record_.volume_id);
      bool waiting = snap && (snap->state == MappingState::kDead || snap->state == MappingState::kReattaching);
      if (waiting && self->run_->node.loop.NowMs() < deadline) return;
      self->timer_->Stop();
      if (snap && snap->state == MappingState::kConnected) return self->JournalPid();
      NBDK_LOG_WARN("heal_not_connected", {{"volume", self->record_.volume_id},
                                           {"state", snap ? MappingStateName(snap->state) : "gone"},
                                           {"reason", snap ? snap->reason : ""}});
      self->Finish();
    });
  }

  void JournalPid() {
    auto snap = run_->node.supervisor.Snapshot(record_.volume_id);
    VolumeRecord updated = record_;
    updated.rbd_nbd_pid = snap ? snap->pid : 0;
    bool connected = snap && snap->state == MappingState::kConnected;
    auto self = shared_from_this();
    run_->node.volumes.Put(updated, [self, connected](Status s) {
      self->Check(s.WithContext("node journal"), "journal");
      if (!connected) return self->Finish();
      self->ReadMounts();
    });
  }

  void ReadMounts() {
    auto table = std::make_shared<Result<std::vector<MountEntry>>>(Status::Internal("not read"));
    auto self = shared_from_this();
    run_->node.loop.RunBlocking([table, path = run_->options.mountinfo_path] { *table = ReadMountTable(path); },
                                [self, table] {
                                  if (!self->Check(table->status(), "read mounts")) return self->Finish();
                                  self->mounts_ = std::move(**table);
                                  self->MountStaging();
                                });
  }

  // The flags passed the allow-list when the CO sent them; the journal is
  // read back as outside input all the same.
  Status JournaledFlagsAllowed() const {
    if (record_.block) return Status::Ok();
    Status s = ParseMountFlags(record_.mount_flags, record_.fs_type, "journaled mount_flags").status();
    for (const PublishedTarget& t : record_.published_targets) {
      if (s.ok()) s = ParseMountFlags(t.mount_flags, record_.fs_type, "journaled target mount_flags").status();
    }
    return s;
  }

  void MountStaging() {
    if (!Check(JournaledFlagsAllowed(), "remount")) return Finish();
    auto self = shared_from_this();
    CheckMapper([self] { self->RemountStaging(); });
  }

  void RemountStaging() {
    std::string mp = StagedMountPoint(record_.staging_path, record_.volume_id);
    if (FindMount(mounts_, mp) != nullptr) return MountTargets(0);
    auto self = shared_from_this();
    auto next = [self, mp](Status s) {
      if (self->Check(s, "remount staging")) {
        ++self->run_->summary.remounted;
        NBDK_LOG_INFO("heal_remounted", {{"volume", self->record_.volume_id}, {"path", mp}});
      }
      self->MountTargets(0);
    };
    if (record_.block) return run_->node.host.BindMount(StagedDevice(record_), mp, record_.read_only, {}, next);
    // As the stage mounted it, its flags included.
    run_->node.host.Mount(record_.fs_type, StagedDevice(record_), mp,
                          StagingMountOptions(record_.mount_flags, record_.read_only), next);
  }

  // An encrypted volume's mounts sit on its mapper: checked, and remounted
  // only when the journaled mapper is the volume's and is open on the volume's device
  // (the kernel keeps it through a daemon restart; a mapper on another
  // device is not this volume's data). Its passphrase is not kept, so a
  // closed mapper waits for a re-stage.
  void CheckMapper(std::function<void()> remount) {
    if (record_.luks_mapper.empty()) return remount();
    auto name = LuksMapperName(record_.volume_id);
    if (!name.ok() || *name != record_.luks_mapper) {
      Check(Status::Corruption("journaled luks_mapper " + record_.luks_mapper + " is not volume " + record_.volume_id +
                               "'s"),
            "remount");
      return Finish();
    }
    auto self = shared_from_this();
    run_->node.host.LuksBacking(record_.luks_mapper, [self, remount](Result<std::string> backing) {
      Status s = backing.status();
      if (backing.ok() && *backing != self->record_.nbd_device) {
        s = Status::FailedPrecondition("mapper " + self->record_.luks_mapper + " is open on " + *backing + ", not on " +
                                       self->record_.nbd_device);
      }
      if (!self->Check(s.WithContext("mapper " + self->record_.luks_mapper), "remount")) return self->Finish();
      remount();
    });
  }

  void MountTargets(size_t i) {
    const auto& targets = record_.published_targets;
    while (i < targets.size() && FindMount(mounts_, targets[i].path) != nullptr) ++i;
    if (i == targets.size()) return Finish();
    std::string source =
        record_.block ? StagedDevice(record_) : StagedMountPoint(record_.staging_path, record_.volume_id);
    auto self = shared_from_this();
    auto next = [self, i](Status s) {
      if (self->Check(s, "remount target")) {
        ++self->run_->summary.remounted;
        NBDK_LOG_INFO("heal_remounted",
                      {{"volume", self->record_.volume_id}, {"path", self->record_.published_targets[i].path}});
      }
      self->MountTargets(i + 1);
    };
    run_->node.host.BindMount(source, targets[i].path, targets[i].read_only, targets[i].mount_flags, next);
  }

  void Finish() {
    timer_.reset();
    lock_.reset();
    run_->Finished();
  }

  std::shared_ptr<HealRun> run_;
  VolumeRecord record_;
  HealPlan plan_;
  std::optional<VolumeOpLock> lock_;
  std::unique_ptr<Timer> timer_;
  std::vector<MountEntry> mounts_;
};

}  // namespace

void HealVolumes(NodeContext& node, HealOptions options, std::function<void(HealSummary)> done) {
  NBDK_CHECK_LOOP_THREAD(node.loop);
  auto run = std::make_shared<HealRun>(HealRun{node, std::move(options), std::move(done), {}, 0, 0});
  run->started_ms = node.loop.NowMs();
  auto records = std::make_shared<std::vector<VolumeRecord>>(node.volumes.All());
  run->summary.volumes = records->size();
  run->pending = records->size() + 1;  // +1: held until every volume started
  auto evidence = std::make_shared<HealEvidence>();
  node.loop.RunBlocking([records, evidence, boot = node.options.boot_id,
                         options = run->options.evidence] { *evidence = GatherHealEvidence(*records, boot, options); },
                        [run, records, evidence] {
                          ProbeReattaches(
                              run->node.loop, *records, run->node.options.boot_id, std::move(*evidence),
                              run->options.evidence.probe_wait_ms, [run, records](std::vector<HealPlan> plans) {
                                for (size_t i = 0; i < records->size(); ++i) {
                                  auto lock = run->node.volumes.Lock((*records)[i].volume_id);
                                  std::optional<VolumeOpLock> held;
                                  if (lock.ok()) held.emplace(std::move(*lock));
                                  std::make_shared<VolumeHeal>(run, (*records)[i], plans[i], std::move(held))->Start();
                                }
                                run->Finished();
                              });
                        });
}

}  // namespace nbdk
