// The per-volume parts of /status and /metrics: every staged volume (node
// journal) joined with its mapping (Supervisor). Loop thread only.
#pragma once

#include "base/json_writer.h"
#include "base/metrics.h"
#include "csi/node/staged_volumes.h"
#include "supervisor/device_links.h"
#include "supervisor/supervisor.h"

namespace nbdk {

// Writes the "volumes" JSON array: volume id, image ("pool/[ns/]image"),
// state, device, pid, cookie, restarts, last exit, time in state, targets,
// the log's path, a snapshot's name ("snap", for a volume that maps one)
// and an encrypted volume's LUKS mapper ("luks_mapper", when open).
// rbd-nbd's own output (output_tail, last_exit_output) only with
// `show_output`: it is raw text from a process reading cluster and image
// metadata, and the health port may be reachable by more than root.
//
// A staged volume without a mapping is "Unmapped" with its journaled
// device, unless its record is from a boot other than `boot_id` (this
// boot's, journal/node_boot_id.h): then the node rebooted since, and the
// healer left it alone (HealAction::kStaleBoot). Its state is "StaleBoot"
// with a reason saying what to do, "device" is "" and the journaled device
// is "previous_device": that /dev/nbdN belonged to the boot before and may
// now serve another volume.
// "link" is the volume's stable name once `links` placed it.
void WriteVolumesJson(const StagedVolumes& volumes, const Supervisor& supervisor, const DeviceLinks& links,
                      const std::string& boot_id, bool show_output, JsonWriter& w);

// Writes the "quarantined_records" array: each journal record the daemon
// found damaged at start (journal/node_journal.h) - its file, where it was
// moved and why - whose volume was not staged again since. Nothing heals,
// unmaps or unmounts such a volume; an operator has to look.
void WriteQuarantinedJson(const StagedVolumes& volumes, JsonWriter& w);

// Registers the supervisor's counters, transitions and state gauges, and
// the count of staged volumes and quarantined records.
void AddSupervisorMetrics(Metrics& metrics, const Supervisor& supervisor, const StagedVolumes& volumes);

}  // namespace nbdk
