#include "daemon/status_page.h"

#include "base/version.h"

namespace nbdk {
namespace {

double UptimeSeconds(const DaemonView& view) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - view.started).count();
}

void WriteArray(JsonWriter& w, const char* key, const std::function<void(JsonWriter&)>& write) {
  w.Key(key);
  if (write) return write(w);
  w.StartArray();
  w.EndArray();
}

std::string StatusJson(const DaemonView& view) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  WriteJsonMember(w, "version", kVersion);
  WriteJsonMember(w, "driver", view.config->driver_name);
  WriteJsonMember(w, "node_id", view.config->node_id);
  w.Key("uptime_seconds");
  w.Double(UptimeSeconds(view));
  w.Key("ready");
  w.Bool(view.ready());
  WriteArray(w, "volumes", view.write_volumes);
  WriteArray(w, "quarantined_records", view.write_quarantined);
  w.EndObject();
  return JsonText(buf) + "\n";
}

}  // namespace

void InstallStatusPages(HealthServer& server, Metrics& metrics, const DaemonView& view) {
  const DaemonView* v = &view;
  server.Route("/healthz", [] { return HttpResponse{200, "text/plain; charset=utf-8", "ok\n"}; });
  server.Route("/readyz", [v] {
    bool ready = v->ready();
    return HttpResponse{ready ? 200 : 503, "text/plain; charset=utf-8", ready ? "ready\n" : "not ready\n"};
  });
  server.Route("/metrics", [v] {
    return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", v->metrics->Render()};
  });
  server.Route("/status", [v] { return HttpResponse{200, "application/json", StatusJson(*v)}; });

  metrics.AddCollector([v](MetricsWriter& w) {
    w.Family("nbdkeeper_build_info", "Build information; the value is always 1.", "gauge");
    w.Sample("nbdkeeper_build_info", {{"version", kVersion}}, 1);
    w.Family("nbdkeeper_uptime_seconds", "Seconds since the daemon started.", "gauge");
    w.Sample("nbdkeeper_uptime_seconds", {}, UptimeSeconds(*v));
    w.Family("nbdkeeper_ready", "1 once startup reconciliation has finished.", "gauge");
    w.Sample("nbdkeeper_ready", {}, v->ready() ? 1 : 0);
  });
}

}  // namespace nbdk
