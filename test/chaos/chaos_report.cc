#include "test/chaos/chaos_report.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

namespace nbdk::chaos {
namespace {

using JsonWriter = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

void Key(JsonWriter& w, const char* key, double v) {
  w.Key(key);
  w.Double(std::round(v * 1000) / 1000);
}
void Key(JsonWriter& w, const char* key, uint64_t v) {
  w.Key(key);
  w.Uint64(v);
}
void Key(JsonWriter& w, const char* key, const std::string& v) {
  w.Key(key);
  w.String(v.c_str());
}

void Figures(JsonWriter& w, const char* key, const std::vector<double>& v) {
  w.Key(key);
  w.StartObject();
  Key(w, "count", static_cast<uint64_t>(v.size()));
  Key(w, "p50_s", Percentile(v, 0.5));
  Key(w, "p99_s", Percentile(v, 0.99));
  Key(w, "max_s", Percentile(v, 1));
  w.EndObject();
}

std::string Counter(const std::optional<KeeperCounters>& c, double KeeperCounters::*field) {
  return c ? std::to_string(static_cast<long long>((*c).*field)) : "-";
}

double LongestStall(const ChaosReport& r) {
  double s = 0;
  for (const VolumeOutcome& v : r.volumes) s = std::max(s, v.max_clat_s);
  return s;
}

}  // namespace

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

double ChaosReport::cpu_s() const {
  double s = 0;
  for (const Incarnation& i : incarnations) s += i.cpu_s;
  return s;
}

uint64_t ChaosReport::io_errors() const {
  return static_cast<uint64_t>(std::count_if(volumes.begin(), volumes.end(), [](auto& v) { return v.io_failed; }));
}

uint64_t ChaosReport::verify_failures() const {
  return static_cast<uint64_t>(std::count_if(volumes.begin(), volumes.end(), [](auto& v) { return v.verify_failed; }));
}

std::string ToJson(const ChaosReport& r) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  Key(w, "verdict", std::string(r.passed() ? "PASS" : "FAIL"));
  Key(w, "seed", r.seed);
  Key(w, "duration_s", r.duration_s);
  w.Key("injections");
  w.StartObject();
  for (const auto& [kind, n] : r.injections) Key(w, kind.c_str(), static_cast<uint64_t>(n));
  w.EndObject();
  Figures(w, "child_heal", r.child_heal_s);
  Figures(w, "daemon_heal", r.daemon_heal_s);
  Figures(w, "daemon_heal_with_reattach", r.down_heal_s);
  Key(w, "longest_io_stall_s", LongestStall(r));
  Key(w, "io_errors", r.io_errors());
  Key(w, "verify_failures", r.verify_failures());
  Key(w, "rss_kib_all_mapped", r.rss_kib_all_mapped);
  Key(w, "cpu_s", r.cpu_s());
  w.Key("volumes");
  w.StartArray();
  for (const VolumeOutcome& v : r.volumes) {
    w.StartObject();
    Key(w, "id", v.id);
    Key(w, "access", v.access);
    Key(w, "device", v.device);
    Key(w, "fio_write_kib", v.write_kib);
    Key(w, "fio_verify_kib", v.verify_kib);
    Key(w, "fio_error", static_cast<uint64_t>(v.fio_error));
    Key(w, "fio_max_clat_s", v.max_clat_s);
    Key(w, "fsck", v.fsck);
    w.EndObject();
  }
  w.EndArray();
  w.Key("daemon_incarnations");
  w.StartArray();
  for (const Incarnation& i : r.incarnations) {
    w.StartObject();
    Key(w, "pid", static_cast<uint64_t>(i.pid));
    Key(w, "ended_by", i.ended_by);
    Key(w, "child_deaths_injected", i.child_deaths_injected);
    Key(w, "adoptions_expected", i.adoptions_expected);
    if (i.counters) {
      Key(w, "rbd_nbd_deaths_total", i.counters->deaths);
      Key(w, "reattaches_total", i.counters->reattaches);
      Key(w, "adoptions_total", i.counters->adoptions);
      Key(w, "expirations_total", i.counters->expirations);
    }
    Key(w, "cpu_s", i.cpu_s);
    Key(w, "max_rss_kib", i.max_rss_kib);
    w.EndObject();
  }
  w.EndArray();
  w.Key("failures");
  w.StartArray();
  for (const std::string& f : r.failures) w.String(f.c_str());
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString()) + "\n";
}

Status WriteJson(const ChaosReport& report, const std::string& path) {
  std::ofstream out(path);
  out << ToJson(report);
  out.close();
  return out ? Status::Ok() : Status::IoError("cannot write " + path);
}

void PrintTable(const ChaosReport& r) {
  std::printf("\n== chaos: seed %llu, %.0f s ==\n", static_cast<unsigned long long>(r.seed), r.duration_s);
  std::printf("%-22s %6s\n", "injection", "count");
  for (const auto& [kind, n] : r.injections) std::printf("%-22s %6d\n", kind.c_str(), n);
  std::printf("\n%-22s %6s %8s %8s %8s\n", "heal latency", "n", "p50 s", "p99 s", "max s");
  auto row = [](const char* what, const std::vector<double>& v) {
    std::printf("%-22s %6zu %8.2f %8.2f %8.2f\n", what, v.size(), Percentile(v, 0.5), Percentile(v, 0.99),
                Percentile(v, 1));
  };
  row("rbd-nbd killed", r.child_heal_s);
  row("daemon restarted", r.daemon_heal_s);
  row("... + rbd-nbd died", r.down_heal_s);
  std::printf("\n%-18s %-6s %-10s %10s %10s %6s %9s  %s\n", "volume", "access", "device", "fio MiB w", "verified",
              "error", "max IO s", "fsck");
  for (const VolumeOutcome& v : r.volumes) {
    std::printf("%-18s %-6s %-10s %10.1f %10.1f %6d %9.2f  %s\n", v.id.c_str(), v.access.c_str(), v.device.c_str(),
                static_cast<double>(v.write_kib) / 1024, static_cast<double>(v.verify_kib) / 1024, v.fio_error,
                v.max_clat_s, v.fsck.c_str());
  }
  std::printf("\n%-8s %-8s %9s %7s %9s %9s %9s %7s %9s\n", "daemon", "ended by", "injected", "deaths", "reattach",
              "adopt exp", "adopted", "cpu s", "rss KiB");
  for (const Incarnation& i : r.incarnations) {
    std::printf(
        "%-8d %-8s %9llu %7s %9s %9llu %9s %7.2f %9llu\n", i.pid, i.ended_by.c_str(),
        static_cast<unsigned long long>(i.child_deaths_injected), Counter(i.counters, &KeeperCounters::deaths).c_str(),
        Counter(i.counters, &KeeperCounters::reattaches).c_str(), static_cast<unsigned long long>(i.adoptions_expected),
        Counter(i.counters, &KeeperCounters::adoptions).c_str(), i.cpu_s,
        static_cast<unsigned long long>(i.max_rss_kib));
  }
  std::printf("\nlongest IO stall (fio max completion latency): %.2f s; IO errors: %llu; verify failures: %llu\n",
              LongestStall(r), static_cast<unsigned long long>(r.io_errors()),
              static_cast<unsigned long long>(r.verify_failures()));
  std::printf("daemon RSS with every volume mapped: %llu KiB; CPU time over the run (all incarnations): %.2f s\n",
              static_cast<unsigned long long>(r.rss_kib_all_mapped), r.cpu_s());
  for (const std::string& f : r.failures) std::printf("FAILED: %s\n", f.c_str());
  std::printf("chaos_run: %s\n", r.passed() ? "PASS" : "FAIL");
  std::fflush(stdout);
}

}  // namespace nbdk::chaos
