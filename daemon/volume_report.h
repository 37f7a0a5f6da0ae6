// The per-volume parts of /status and /metrics: every staged volume (node
// journal) joined with its mapping (Supervisor). Loop thread only.
#pragma once

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "csi/staged_volumes.h"
#include "daemon/base/metrics.h"
#include "supervisor/supervisor.h"

namespace nbdk {

// Writes the "volumes" JSON array: volume id, image, state, device, pid,
// cookie, restarts, last exit, time in state, targets and the log's path.
// rbd-nbd's own output (output_tail, last_exit_output) only with
// `show_output`: it is raw text from a process reading cluster and image
// metadata, and the health port may be reachable by more than root.
void WriteVolumesJson(const StagedVolumes& volumes, const Supervisor& supervisor, bool show_output,
                      rapidjson::Writer<rapidjson::StringBuffer>& w);

// Registers the supervisor's counters, transitions and state gauges.
void AddSupervisorMetrics(Metrics& metrics, const Supervisor& supervisor, const StagedVolumes& volumes);

}  // namespace nbdk
