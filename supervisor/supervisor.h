// Supervisor: keeps every volume's rbd-nbd mapping alive (one Mapping per
// volume id), and is the daemon's one entry point for mapping work: nothing
// else runs rbd-nbd.
//
// Daemon wiring:
//  - CSI NodeStage -> Map(); NodeUnstage -> Unmap().
//  - netlink LINK_DEAD subscription -> OnLinkDead(index).
//  - stable device names -> SetStateChanged (DeviceLinks).
//  - after a restart, the journal's recorded servers -> Adopt().
//  - /status -> Snapshots(); /metrics -> counters(), transitions(),
//    CountByState().
//  - daemon stop: ReleaseAll() (default: rbd-nbd keeps serving) or
//    Detach() per volume (graceful option).
//
// Callbacks run on the loop thread. A `done` may run before the call
// returns (validation errors, already mapped, nothing to do). Mappings
// that reach Unmapped or Failed are forgotten (their counters stay).
//
// Loop thread only.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "base/status.h"
#include "supervisor/attach_queue.h"
#include "supervisor/lock_breaker.h"
#include "supervisor/mapping.h"
#include "supervisor/mapping_snapshot.h"
#include "supervisor/supervisor_config.h"
#include "supervisor/supervisor_stats.h"

namespace nbdk {

class Supervisor {
 public:
  // `loop` and `lock_breaker` must outlive the Supervisor.
  Supervisor(EventLoop& loop, SupervisorConfig config, LockBreaker& lock_breaker);
  // Same as ReleaseAll(): running rbd-nbd processes are left running.
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Maps the volume; `done` gets "/dev/nbdN" once rbd-nbd printed it and
  // io_timeout was written. Idempotent: the same volume and image (and
  // snapshot) already
  // Connected returns its device; a map in flight is joined. Errors:
  // InvalidArgument (bad request, forbidden map option such as a non-zero
  // --io-timeout), AlreadyExists (volume mapped to another image),
  // Unavailable (re-attach in progress: retry; or rbd-nbd map failed, with
  // the tail of its stderr), DeadlineExceeded (no device line in
  // map_deadline_ms), FailedPrecondition (Expired: unmap first), Aborted
  // (unmap in progress).
  void Map(MapRequest request, std::function<void(Result<std::string>)> done);

  // Planned unmap (never re-attaches). An unknown volume is OK (already
  // unmapped). Aborted while its map is in flight. The volume's log file
  // is removed once it is unmapped (also for an unknown volume: an earlier
  // run's log).
  void Unmap(const std::string& volume_id, std::function<void(Status)> done);

  // Planned detach: SIGTERM the server, leaving the device configured.
  // NotFound for an unknown volume.
  void Detach(const std::string& volume_id, std::function<void(Status)> done);

  // Takes over a running rbd-nbd that is not our child (pidfd watch). A pid
  // already gone starts a re-attach at once. AlreadyExists if the volume
  // or the device is already supervised.
  Status Adopt(AdoptRequest request);

  // The two other outcomes of healing after a restart (csi/heal/volume_healer.h);
  // same validation and AlreadyExists errors as Adopt, request.pid ignored.
  // Reattach: the server is gone, the kernel still holds the device with
  // our cookie: re-attach it at once (a dead pid is never watched: it may
  // have been recycled). AdoptExpired: the kernel gave up on the device;
  // the mapping is Expired from the start (reported by /status and
  // NodeGetVolumeStats), and Unmap still cleans the device up.
  Status Reattach(AdoptRequest request, std::string reason);
  Status AdoptExpired(AdoptRequest request, std::string reason);

  // `cb(volume_id)` runs each time what the node journal keeps of a
  // volume's server changes (its Snapshot: pid, own_clients):
  //  - a re-attach spawned `rbd-nbd attach`: that process becomes the
  //    server if it connects, and after a daemon restart only a journaled
  //    attach pid is adopted (sysfs still names the original map;
  //    csi/heal/heal_plan.h). Journaled at the spawn, not at the connect,
  //    so a crash in between still finds it;
  //  - the volume's own Ceph clients grew (supervisor/image_fence.h).
  void SetServerChanged(std::function<void(const std::string& volume_id)> cb) { server_changed_ = std::move(cb); }

  // `cb` runs after each state change of a mapping, with what it maps
  // ("pool/[ns/]image[@snap]") and device ("" until known): what keeps the stable
  // device names (supervisor/device_links.h).
  using StateChanged = std::function<void(const std::string& volume_id, const std::string& image,
                                          const std::string& device, MappingState state)>;
  void SetStateChanged(StateChanged cb) { state_changed_ = std::move(cb); }

  // Each rbd-nbd started or adopted from now on goes into a systemd scope
  // of its own (see child_scope.h); without this call (or with null) they
  // stay in the daemon's cgroup. Call before the first Map or Adopt;
  // `scopes` must outlive the Supervisor.
  void SetChildScopes(ChildScopes* scopes) { scopes_ = scopes; }

  // Each use of a volume's device below first checks, off the loop, that
  // the device is still the volume's (CheckNbdBackendCookie): NotFound when
  // the volume has no mapping, FailedPrecondition when its device was
  // released or carries another cookie.
  //
  // The device, for a publish to bind (or to bind the mount staged on it).
  void CheckDevice(const std::string& volume_id, std::function<void(Result<std::string>)> done);

  // The size in bytes of the volume's nbd device, read off the loop.
  void DeviceBytes(const std::string& volume_id, std::function<void(Result<uint64_t>)> done);

  // Grows the volume's nbd device to `bytes` when it is smaller (never
  // shrinks), for NodeExpandVolume: rbd-nbd 16 cannot resize a
  // netlink-configured device itself (netlink/nbd_resize.h), so its owner
  // does. Off the loop; `done` gets the device's size after; the kernel's
  // refusal as its errno.
  void GrowDevice(const std::string& volume_id, uint64_t bytes, std::function<void(Result<uint64_t>)> done);

  // `rbd-nbd unmap <device>` for a device no mapping holds: what a stage cut
  // short by a crash left (csi/node/stage_leftovers.h). The Supervisor is the one
  // runner of rbd-nbd unmap: same argv, environment and timeout as a
  // mapping's. Internal naming the device when it fails.
  void UnmapLeftoverDevice(const std::string& device, std::function<void(Status)> done);

  // A netlink LINK_DEAD for /dev/nbd<index>; unknown devices are ignored.
  // See Mapping::OnLinkDead for the policy.
  void OnLinkDead(int index);

  // Forgets every mapping without signalling any process: their handles
  // and pipes are closed, rbd-nbd keeps serving the device. Pending
  // callbacks get Aborted. Returns what was released (for the journal).
  std::vector<MappingSnapshot> ReleaseAll();

  std::vector<MappingSnapshot> Snapshots() const;  // sorted by volume id
  std::optional<MappingSnapshot> Snapshot(const std::string& volume_id) const;
  const SupervisorCounters& counters() const { return stats_.counters; }
  const TransitionCounter& transitions() const { return stats_.transitions; }
  const HistogramSeries& reattach_seconds() const { return stats_.reattach_seconds; }
  // Current number of mappings in each state (a gauge), indexed by
  // static_cast<int>(MappingState).
  std::array<size_t, kMappingStateCount> CountByState() const;
  const SupervisorConfig& config() const { return config_; }
  // Maps and attaches running, and waiting for a slot (attach_queue.h).
  size_t attaches_in_flight() const { return attach_queue_.in_flight(); }
  size_t attaches_waiting() const { return attach_queue_.waiting(); }

 private:
  std::unique_ptr<Mapping> NewMapping(MapRequest request);
  // The clients of the snapshot mappings of the image "pool/[ns/]image"
  // (Mapping::Env::snapshot_clients).
  OwnClients SnapshotClients(const std::string& image_path) const;
  // Validates a restored mapping and adds it to the table (not started).
  Result<Mapping*> AddRestored(AdoptRequest& request);
  void Retire(const std::string& volume_id);
  Mapping* Find(const std::string& volume_id) const;
  // The volume's nbd device; NotFound when the volume has no mapping.
  struct VolumeDevice {
    std::string path;    // "/dev/nbd7"
    std::string cookie;  // what it must carry to be the volume's
  };
  Result<VolumeDevice> MappedDevice(const std::string& volume_id) const;
  // `work` on the volume's device, off the loop, once it proved to be the
  // volume's (CheckNbdBackendCookie); `done` on the loop.
  template <typename T>
  void OnOwnDevice(const std::string& volume_id, std::function<Result<T>(const std::string& device)> work,
                   std::function<void(Result<T>)> done);

  EventLoop& loop_;
  SupervisorConfig config_;
  LockBreaker& lock_breaker_;
  SupervisorStats stats_;
  // Declared before the mappings: their tickets go before it does.
  AttachQueue attach_queue_;
  std::map<std::string, std::unique_ptr<Mapping>> mappings_;
  std::function<void(const std::string& volume_id)> server_changed_;
  StateChanged state_changed_;
  ChildScopes* scopes_ = nullptr;
  // Finished mappings, deleted on the next loop turn: they are retired
  // from inside their own callbacks.
  std::vector<std::unique_ptr<Mapping>> retired_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace nbdk
