// Mapping: the cgroup of its rbd-nbd process (supervisor/child_scope.h).
// A scope is best effort: a failed move is logged and reported in /status,
// never a failed map or attach; the child then heals by re-attach after a
// daemon restart, as it did before scopes.
#include "base/log.h"
#include "supervisor/mapping.h"

namespace nbdk {

namespace {
constexpr const char* kScopesOff = "child scopes are off";
}  // namespace

void Mapping::SetDaemonCgroup(std::string reason) {
  cgroup_mode_ = CgroupMode::kDaemon;
  scope_.clear();
  cgroup_reason_ = std::move(reason);
}

void Mapping::PlaceInScope(int pid) {
  if (!env_.scopes) {
    SetDaemonCgroup(kScopesOff);
    return;
  }
  std::string unit = ScopeUnitName(request_.volume_id);
  SetDaemonCgroup("moving into " + unit);
  std::weak_ptr<bool> weak = alive_;
  uint64_t generation = server_generation_;
  // The move runs while the child already works: a map or attach never
  // waits for systemd.
  env_.scopes->MoveIntoScope(request_.volume_id, pid, [this, weak, generation, pid](Result<std::string> moved) {
    // A newer process (or none) by now: this answer is about a dead one.
    if (weak.expired() || released_ || generation != server_generation_) return;
    if (!moved.ok()) {
      SetDaemonCgroup("scope failed: " + moved.status().message());
      NBDK_LOG_WARN("child_scope_failed",
                    {{"volume", request_.volume_id}, {"pid", pid}, {"error", moved.status().ToString()}});
      return;
    }
    cgroup_mode_ = CgroupMode::kScope;
    scope_ = *moved;
    cgroup_reason_.clear();
    NBDK_LOG_INFO("child_scoped", {{"volume", request_.volume_id}, {"pid", pid}, {"scope", scope_}});
  });
}

// An adopted server kept the cgroup it had: the scope a previous run gave
// it, or the cgroup of a previous daemon (its container or unit), in which
// case it gets its scope now.
void Mapping::FindAdoptedScope(int pid) {
  std::string unit = ScopeUnitName(request_.volume_id);
  auto cgroup = ReadProcCgroup(pid);
  if (cgroup.ok() && ProcCgroupInUnit(*cgroup, unit)) {
    cgroup_mode_ = CgroupMode::kScope;
    scope_ = unit;
    cgroup_reason_.clear();
    return;
  }
  if (!cgroup.ok()) {
    // Gone already: its pidfd reports the exit on the next loop turn.
    SetDaemonCgroup("adopted; " + cgroup.status().message());
    return;
  }
  PlaceInScope(pid);
}

}  // namespace nbdk
