// The health endpoint's pages: /healthz, /readyz, /metrics and /status.
// Loop thread only.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "base/json_writer.h"
#include "base/metrics.h"
#include "daemon/config.h"
#include "daemon/health_server.h"

namespace nbdk {

struct DaemonView {
  const Config* config = nullptr;
  const Metrics* metrics = nullptr;
  std::chrono::steady_clock::time_point started;
  std::function<bool()> ready;
  // Writes the "volumes" array; nullptr writes an empty one.
  std::function<void(JsonWriter&)> write_volumes;
  // Writes the "quarantined_records" array; nullptr writes an empty one.
  std::function<void(JsonWriter&)> write_quarantined;
};

// Registers every page on `server` and the daemon-level metrics (build info,
// uptime, readiness) on `metrics`. `view` must outlive the server.
void InstallStatusPages(HealthServer& server, Metrics& metrics, const DaemonView& view);

}  // namespace nbdk
