// HealVolumes: brings every journaled volume back under supervision when
// nbdkeeperd starts, before it reports ready - with no Kubernetes API, from
// the node journal, the kernel and /proc alone.
//
// For each record, PlanHeal (csi/heal/heal_plan.h) over HealEvidence decides:
//  - Adopt: Supervisor::Adopt watches the live rbd-nbd through a pidfd;
//  - Reattach: Supervisor::Reattach attaches the same /dev/nbdN with the
//    same cookie at once;
//  - Expired: Supervisor::AdoptExpired, so /status and NodeGetVolumeStats
//    report it abnormal and NodeUnstage still unmaps the device;
//  - StaleBoot, Skip, UnknownServer: nothing is touched; the record stays,
//    so NodeUnstage still succeeds and cleans up.
// After an Adopt, and after a Reattach once the device is Connected again,
// the journal gets the serving pid, and the mounts are checked: the staging
// mount (<staging>/<volume id>) and every published target's bind mount;
// missing ones are mounted again (the record keeps no mount options: only
// "ro" is restored).
// A journal write that fails (the state directory full) is a failure like
// any other step's: counted and logged, the device stays served and its
// mounts are still checked. What a restart needs, a re-attach's pid, is
// journaled by csi/node/server_journal.h, which retries a failed write.
//
// All volumes heal concurrently, each holding its volume's operation lock
// (a CSI call meanwhile gets ABORTED and is retried by kubelet). `done`
// runs once every volume has FINISHED: a Reattach counts as finished when
// the mapping is Connected or Expired, or after attach_wait_ms (it then
// keeps re-attaching in the Supervisor, and its mounts are not checked).
// One log line per volume ("heal_decision") and one summary ("healed").
//
// Loop thread only; `node` outlives the healing.
#pragma once

#include <cstdint>
#include <functional>

#include "csi/heal/heal_evidence.h"
#include "csi/node/node_context.h"

namespace nbdk {

struct HealOptions {
  HealEvidenceOptions evidence;
  std::string mountinfo_path = "/proc/self/mountinfo";
  uint64_t attach_wait_ms = 60000;
};

struct HealSummary {
  size_t volumes = 0;
  size_t adopted = 0, reattached = 0, expired = 0, stale_boot = 0, skipped = 0, left_alone = 0;
  size_t remounted = 0;
  size_t failures = 0;  // supervisor, journal or mount errors (each logged)
  uint64_t elapsed_ms = 0;
};

void HealVolumes(NodeContext& node, HealOptions options, std::function<void(HealSummary)> done);

}  // namespace nbdk
