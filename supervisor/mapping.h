// Mapping: the state machine of one volume's rbd-nbd mapping (see
// mapping_state.h for the states and their edges).
//
// The `rbd-nbd map -f` child, once it printed the device, IS the server;
// when it dies unplanned the mapping re-attaches the same device with the
// same cookie: break the dead owner's lock, spawn `rbd-nbd attach -f`,
// retry with backoff until the reattach deadline (death + reattach_timeout
// - safety margin), then Expired. A planned stop (Unmap, Detach, Release)
// never triggers a re-attach.
//
// Every transition is logged with its reason and counted in
// SupervisorStats. Callbacks that arrive after the mapping was destroyed
// (lock breaker, sysfs write, unmap command) are dropped.
//
// Loop thread only. Created and owned by the Supervisor.
//
// One class, one file per concern:
//   mapping.cc           the map, the connected state, the process and its exit
//   mapping_restart.cc   starts after a daemon restart: adopt, re-attach, expired
//   mapping_reattach.cc  death, re-attach with backoff, expiry, LINK_DEAD, and
//                        the wait for an attach slot maps and attaches share
//   mapping_stop.cc      planned stops (Unmap, Detach), Release, and the
//                        disconnect of an Expired device
//   mapping_fence.cc     the image's other clients (supervisor/image_fence.h)
//   mapping_scope.cc     the server's cgroup (supervisor/child_scope.h)
//   mapping_snapshot.cc  Snapshot(), for /status (mapping_snapshot.h)
//   mapping_stall.cc     the stall watch: a stuck server is ended (stall_rule.h)
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/child_process.h"
#include "base/command.h"
#include "base/event_loop.h"
#include "base/status.h"
#include "base/uv_handle.h"
#include "supervisor/attach_queue.h"
#include "supervisor/child_scope.h"
#include "supervisor/image_fence.h"
#include "supervisor/lock_breaker.h"
#include "supervisor/mapping_snapshot.h"
#include "supervisor/mapping_state.h"
#include "supervisor/output_log.h"
#include "supervisor/pidfd_watch.h"
#include "supervisor/stall_rule.h"
#include "supervisor/supervisor_config.h"
#include "supervisor/supervisor_stats.h"

namespace nbdk {

// FailedPrecondition "image <path> is in use by another client: <clients>,
// which appeared during the <during>" (mapping_fence.cc).
Status InUseBy(const std::string& image_path, const std::vector<CephClient>& strangers, const char* during);

class Mapping {
 public:
  // What a Mapping borrows from its Supervisor; all of it outlives it.
  struct Env {
    EventLoop& loop;
    const SupervisorConfig& config;
    LockBreaker& lock_breaker;
    SupervisorStats& stats;
    // Every map and attach process waits here for a slot (attach_queue.h).
    AttachQueue& attach_queue;
    // Called on reaching Unmapped or Failed, before the user's callback;
    // the Supervisor forgets the mapping (deferred delete).
    std::function<void(const std::string& volume_id)> on_final;
    // Called when the server's pid or the volume's own Ceph clients change
    // (see Supervisor::SetServerChanged).
    std::function<void(const std::string& volume_id)> on_server_changed;
    // The clients of this node's snapshot mappings of an image
    // ("pool/[ns/]image"): not foreign to a single-node mapping of it
    // (supervisor/image_fence.h NotForeign).
    std::function<OwnClients(const std::string& image_path)> snapshot_clients;
    // Called after each state change (see Supervisor::SetStateChanged).
    std::function<void(const std::string& volume_id, const std::string& image, const std::string& device,
                       MappingState state)>
        on_state;
    // Moves each server into a scope of its own; null: child scopes are off.
    ChildScopes* scopes = nullptr;
  };
  using MapDone = std::function<void(Result<std::string>)>;
  using StopDone = std::function<void(Status)>;

  // `request` must have passed ValidateMapRequest.
  Mapping(Env env, MapRequest request);
  // Forgets any process without signalling it (same as Release()).
  ~Mapping();
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  // Spawns `rbd-nbd map -f` once the attach queue grants a slot (the map
  // deadline starts then). `done` gets the device once it printed it and
  // io_timeout was written (a write failure is logged and counted, not
  // fatal), or the error that left the mapping Failed.
  void StartMap(MapDone done);
  // Another caller waiting for the map in flight (state Mapping).
  void AddMapWaiter(MapDone done) { map_waiters_.push_back(std::move(done)); }
  // Takes over a running server that is not our child. If the pid is
  // already gone the mapping goes Dead and re-attaches. Errors other than
  // "no such process" leave the mapping Failed.
  Status StartAdopted(const std::string& device, int pid);
  // After a daemon restart: the server of `device` is gone but the kernel
  // still holds the device with our cookie. Goes Dead and re-attaches, with
  // a full reattach window from now (the death time is unknown).
  void StartReattach(const std::string& device, std::string reason);
  // After a daemon restart: the kernel gave up on `device`. Enters Expired
  // with no process, so Unmap can still clean the device up.
  void StartExpired(const std::string& device, std::string reason);

  // Planned unmap: `rbd-nbd unmap <device>`, then waits for the server to
  // exit; Unmapped. "Not mapped" with no server left is success. From
  // Connected, Dead, Reattaching or Expired; Aborted while Mapping, except
  // a map still waiting for an attach slot: it leaves the queue, its
  // waiters get Aborted and the mapping is Unmapped. Joins an Unmapping
  // already in progress.
  void Unmap(StopDone done);
  // Planned detach: SIGTERM the server (the device stays configured and can
  // be attached later), Unmapped when it exited. Without a server (Dead,
  // Reattaching, Expired) it stops retrying and is Unmapped at once.
  void Detach(StopDone done);
  // Netlink LINK_DEAD for this device; the policy is documented at its
  // definition in mapping_reattach.cc.
  void OnLinkDead();
  // Forgets every process without signalling it (daemon stop leaves
  // rbd-nbd running); pending callers get Aborted. The mapping is inert
  // afterwards.
  void Release();

  MappingState state() const { return state_; }
  // False once an Expired or Fenced mapping's device was disconnected or
  // found to be no longer ours: the index may serve another volume since.
  bool holds_device() const { return !device_released_; }
  const std::string& cookie() const { return cookie_; }
  const std::string& reason() const { return reason_; }
  const std::string& device() const { return device_; }
  const MapRequest& request() const { return request_; }
  // The Ceph clients of this volume's rbd-nbd processes, past and present.
  const OwnClients& own_clients() const { return own_clients_; }
  MappingSnapshot Snapshot() const;

 private:
  // mapping.cc: the map, the connected state, the process and its exit.
  void Transition(MappingState to, std::string reason);
  Status SpawnRbdNbd(const std::vector<std::string>& argv, const char* role);
  void OnLine(OutputStream stream, std::string_view line);
  void SpawnMap();
  void OnDeviceLine(const std::string& device);
  std::string DescribeExit(const std::optional<ExitInfo>& exit) const;
  void OnProcessGone(std::optional<ExitInfo> exit);
  void FailMap(Status error);
  void FinishMapWaiters(const Result<std::string>& result);
  bool ServerRunning() const;
  Status KillServer(int signum);
  int ServerPid() const;
  // Stops every timer and gives up the attach slot or queue place.
  void CancelPending();
  // mapping_reattach.cc: death, re-attach, expiry, LINK_DEAD.
  void OnDeath(std::string reason);
  // Queues this mapping's next start (a map or an attach attempt).
  void WaitForAttachSlot(AttachQueue::Kind kind, std::function<void()> start);
  bool WaitingForAttachSlot() const { return attach_slot_ && !attach_slot_->granted(); }
  void StartAttachAttempt();
  void SpawnAttach();
  std::string DeadlineReason() const;
  void OnAttachFailed(std::string reason);
  void Expire(std::string reason);
  void OnLinkDeadGraceOver(uint64_t generation);
  // Expired: at `when_ms`, disconnects the device so that the IO it still
  // holds fails instead of waiting for ever (definition: why).
  void ReleaseExpiredDeviceAt(uint64_t when_ms);
  // mapping_stop.cc: `then` gets OK while the device carries our cookie
  // (CheckNbdBackendCookie); dropped if the mapping is gone.
  void CheckDeviceIsOurs(std::function<void(Status)> then);
  // Expired or Fenced: disconnects the device if it is still ours, logs
  // `event`, and holds_device() turns false either way once done.
  void ReleaseDevice(const char* event, std::string why);
  // mapping_stop.cc: planned stops.
  // A stop request the current state answers by itself (map in flight, a
  // stop already running, already stopped): answers it and returns true.
  bool SettleStopEarly(const char* what, StopDone& done);
  // `rbd-nbd unmap <device>`; `done` is dropped if the mapping is gone.
  void RunUnmapCommand(std::function<void(const Result<CommandResult>&)> done);
  void StartUnmapCommand();
  void OnUnmapCommandDone(const Result<CommandResult>& result);
  void MaybeFinishStop();
  void FinishStop(MappingState to, Status status, std::string reason);
  // mapping_fence.cc: the image's other clients (supervisor/image_fence.h).
  void CheckClientsBeforeMap();
  void CheckClientsBeforeAttach();
  bool Fenceable() const { return RoleOf(request_) == ImageRole::kSingleWriter; }
  // Fenced mappings and snapshots learn their own clients (image_fence.h).
  bool TracksClients() const { return RoleOf(request_) != ImageRole::kUnfenced; }
  // What a single-node mapping's checks do not count as foreign.
  OwnClients NotForeignClients() const;
  void Fence(std::string reason);
  // Whether the next map or attach runs with --exclusive: a single-node
  // writer of an image with the exclusive-lock feature.
  bool TakesLock() const { return Fenceable() && before_start_.exclusive_lock; }
  // Lists the image's clients once the process started since `before`
  // printed its device or exited (`holds_lock`: it ran with --exclusive
  // and printed its device), adds its own client (IdentifyStarted), then
  // runs `then` with the strangers that appeared meanwhile, or the
  // listing's error.
  void IdentifyOwnClients(ImageClients before, bool holds_lock, std::function<void(Result<StartedClients>)> then);
  void ClaimPendingClients(const ImageClients& seen);
  void LearnOwnClient(const StartedClients& started);
  // The device came up with a stranger beside it (or unproven): it is
  // unmapped, then the map fails with `why`.
  void RefuseMap(Status why);
  // An --exclusive map that exited: FailedPrecondition naming the other
  // client that holds the image's lock, if one does (librbd refused us
  // the lock), else `failed`.
  void FailLockedOutMap(Status failed);
  // mapping_stall.cc: the stall watch, while Connected.
  void StartStallWatch();
  void SampleIo();
  void ProbeStalledServer();
  void ReportStall(const StallJudgement& judgement);
  // mapping_scope.cc: the server's cgroup.
  void PlaceInScope(int pid);
  void FindAdoptedScope(int pid);
  void SetDaemonCgroup(std::string reason);

  Env env_;
  MapRequest request_;
  std::string cookie_;
  std::string device_;
  MappingState state_ = MappingState::kMapping;
  std::string reason_ = "created";
  uint64_t state_since_ms_ = 0;

  // The foreign writers this death's re-attach checks saw (image_fence.h).
  WriterSightings foreign_writers_;
  std::unique_ptr<ChildProcess> child_;           // map, attach, or serving child
  std::unique_ptr<PidfdWatch> adopted_;           // adopted server
  std::string child_role_;                        // "map" / "attach"
  uint64_t server_generation_ = 0;                // bumped per spawned/adopted process
  CgroupMode cgroup_mode_ = CgroupMode::kDaemon;  // of the current process
  std::string scope_;                             // kScope: its unit
  std::string cgroup_reason_ = "no rbd-nbd process";
  std::deque<std::string> recent_stderr_;   // of the current child
  std::optional<std::string> kill_reason_;  // why we killed the current child
  OutputLog log_;

  // A place in the attach queue, then the slot this map or attach runs in;
  // dropped once its process printed the device or is gone.
  std::unique_ptr<AttachQueue::Ticket> attach_slot_;
  std::unique_ptr<Timer> phase_timer_;      // map/attach deadline, backoff, unmap wait
  std::unique_ptr<Timer> deadline_timer_;   // reattach deadline
  std::unique_ptr<Timer> link_dead_timer_;  // LINK_DEAD grace
  std::unique_ptr<Timer> stall_timer_;      // IO samples while Connected
  std::unique_ptr<Timer> release_timer_;    // Expired: the device's disconnect
  uint64_t reattach_deadline_ms_ = 0;       // loop clock
  uint64_t kernel_gives_up_ms_ = 0;         // death + the kernel's window
  bool device_released_ = false;            // see holds_device()
  uint32_t attempts_ = 0;
  std::string last_attach_failure_;  // in the current outage
  uint32_t restarts_ = 0;
  std::optional<int64_t> last_exit_status_;
  int last_term_signal_ = 0;
  std::string last_exit_output_;         // stderr tail of the last process that exited
  uint64_t epoch_ = 0;                   // bumped when in-flight async results become stale
  OwnClients own_clients_;               // this volume's rbd-nbd processes, past and present
  ImageClients before_start_;            // the image's clients before the current map or attach
  bool server_clients_pending_ = false;  // the current server's clients are not known yet

  StallRule stall_rule_;
  bool stall_busy_ = false;  // a sample or probe is on a pool thread
  bool counters_unreadable_logged_ = false;
  StallVerdict last_stall_verdict_ = StallVerdict::kHealthy;
  std::string stall_report_;  // the latest stall verdict's reason; empty: none

  std::vector<MapDone> map_waiters_;
  std::vector<StopDone> stop_waiters_;
  bool unmap_command_done_ = false;    // Unmapping: the unmap command finished
  bool unmap_from_connected_ = false;  // a live server was serving at Unmap
  bool detaching_ = false;             // Unmapping was a Detach
  bool released_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace nbdk
