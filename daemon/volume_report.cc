#include "daemon/volume_report.h"

#include <map>
#include <string>

#include "csi/heal/heal_plan.h"

namespace nbdk {
namespace {

void WriteMapping(const MappingSnapshot& s, bool show_output, JsonWriter& w) {
  WriteJsonMember(w, "state", MappingStateName(s.state));
  WriteJsonMember(w, "reason", s.reason);
  w.Key("seconds_in_state");
  w.Double(static_cast<double>(s.ms_in_state) / 1000.0);
  WriteJsonMember(w, "device", s.device);
  w.Key("pid");
  w.Int(s.pid);
  w.Key("adopted");
  w.Bool(s.adopted);
  WriteJsonMember(w, "cgroup_mode", CgroupModeName(s.cgroup_mode));
  WriteJsonMember(w, s.cgroup_mode == CgroupMode::kScope ? "scope" : "cgroup_reason",
                  s.cgroup_mode == CgroupMode::kScope ? s.scope : s.cgroup_reason);
  WriteJsonMember(w, "cookie", s.cookie);
  std::vector<std::string> own_clients;
  for (const CephClient& c : s.own_clients) own_clients.push_back(c.ToString());
  WriteJsonMember(w, "own_clients", own_clients);
  w.Key("restarts");
  w.Uint(s.restarts);
  w.Key("attach_attempts");
  w.Uint(s.attach_attempts);
  if (s.attach_queue_position > 0) {
    // Waiting for an attach slot (supervisor/attach_queue.h): 1 is next.
    w.Key("attach_queue_position");
    w.Uint64(s.attach_queue_position);
  }
  w.Key("last_exit_status");
  if (s.last_exit_status) {
    w.Int64(*s.last_exit_status);
  } else {
    w.Null();
  }
  w.Key("last_term_signal");
  w.Int(s.last_term_signal);
  if (s.reattach_ms_left) {
    w.Key("reattach_seconds_left");
    w.Double(static_cast<double>(*s.reattach_ms_left) / 1000.0);
  }
  if (!s.io_stall.empty()) WriteJsonMember(w, "io_stall", s.io_stall);
  WriteJsonMember(w, "log", s.log_path);
  if (!show_output) return;
  WriteJsonMember(w, "last_exit_output", s.last_exit_output);
  WriteJsonMember(w, "output_tail", s.output_tail);
}

// The same test and word as the healer's (csi/heal/heal_plan.h): nothing of
// an earlier boot's mapping exists now, so the old device is not shown as
// the volume's.
void WriteStaleBoot(const VolumeRecord& r, JsonWriter& w) {
  WriteJsonMember(w, "state", HealActionName(HealAction::kStaleBoot));
  WriteJsonMember(w, "reason",
                  "the node rebooted since this volume was staged (under boot " + r.boot_id +
                      "): its device and rbd-nbd are gone and are not re-mapped; unstage it or stage it again");
  WriteJsonMember(w, "device", "");
  WriteJsonMember(w, "previous_device", r.nbd_device);
}

}  // namespace

void WriteVolumesJson(const StagedVolumes& volumes, const Supervisor& supervisor, const DeviceLinks& links,
                      const std::string& boot_id, bool show_output, JsonWriter& w) {
  std::map<std::string, MappingSnapshot> mappings;
  for (MappingSnapshot& s : supervisor.Snapshots()) mappings[s.volume_id] = std::move(s);
  w.StartArray();
  for (const VolumeRecord& r : volumes.All()) {
    w.StartObject();
    WriteJsonMember(w, "volume_id", r.volume_id);
    WriteJsonMember(w, "image", RecordedImage(r).Path());
    if (!r.snap.empty()) WriteJsonMember(w, "snap", r.snap);
    WriteJsonMember(w, "journal_state", VolumeStateName(r.state));
    WriteJsonMember(w, "access", r.block ? "block" : r.fs_type);
    WriteJsonMember(w, "staging_path", r.staging_path);
    if (!r.luks_mapper.empty()) WriteJsonMember(w, "luks_mapper", r.luks_mapper);
    w.Key("targets");
    w.StartArray();
    for (const PublishedTarget& t : r.published_targets) WriteJsonString(w, t.path);
    w.EndArray();
    auto it = mappings.find(r.volume_id);
    if (it != mappings.end()) {
      WriteMapping(it->second, show_output, w);
      WriteJsonMember(w, "link", links.LinkOf(r.volume_id));
      mappings.erase(it);
    } else if (r.boot_id != boot_id) {
      WriteStaleBoot(r, w);
    } else {
      WriteJsonMember(w, "state", "Unmapped");
      WriteJsonMember(w, "device", r.nbd_device);
    }
    w.EndObject();
  }
  // Mappings without a staged record (a stage in flight).
  for (const auto& [id, s] : mappings) {
    w.StartObject();
    WriteJsonMember(w, "volume_id", id);
    WriteJsonMember(w, "image", s.image);
    if (!s.snap.empty()) WriteJsonMember(w, "snap", s.snap);
    WriteJsonMember(w, "journal_state", "");
    WriteMapping(s, show_output, w);
    w.EndObject();
  }
  w.EndArray();
}

void WriteQuarantinedJson(const StagedVolumes& volumes, JsonWriter& w) {
  w.StartArray();
  for (const QuarantinedFile& q : volumes.Quarantined()) {
    w.StartObject();
    WriteJsonMember(w, "file", q.file);
    WriteJsonMember(w, "moved_to", q.moved_to);
    WriteJsonMember(w, "reason", q.reason.message());
    w.EndObject();
  }
  w.EndArray();
}

void AddSupervisorMetrics(Metrics& metrics, const Supervisor& supervisor, const StagedVolumes& volumes) {
  const Supervisor* sup = &supervisor;
  const StagedVolumes* vols = &volumes;
  metrics.AddCollector([sup, vols](MetricsWriter& w) {
    const SupervisorCounters& c = sup->counters();
    struct Counter {
      const char* name;
      const char* help;
      uint64_t value;
    };
    const Counter counters[] = {
        {"nbdkeeper_maps_total", "rbd-nbd maps started.", c.maps_started},
        {"nbdkeeper_map_failures_total", "rbd-nbd maps that failed.", c.maps_failed},
        {"nbdkeeper_adoptions_total", "Running rbd-nbd processes adopted after a restart.", c.adoptions},
        {"nbdkeeper_rbd_nbd_deaths_total", "Unplanned exits of a serving rbd-nbd.", c.deaths},
        {"nbdkeeper_reattach_attempts_total", "rbd-nbd attach attempts.", c.reattach_attempts},
        {"nbdkeeper_reattaches_total", "Successful re-attaches (restarts) on the same device.", c.reattach_successes},
        {"nbdkeeper_reattach_failures_total", "Failed attach attempts.", c.reattach_failures},
        {"nbdkeeper_lock_break_failures_total", "Dead-owner lock breaks that failed.", c.lock_break_failures},
        {"nbdkeeper_expirations_total", "Mappings that passed the reattach deadline.", c.expirations},
        {"nbdkeeper_fencings_total", "Mappings fenced: another client had the image at a re-attach.", c.fencings},
        {"nbdkeeper_link_dead_events_total", "nbd LINK_DEAD netlink events for supervised devices.",
         c.link_dead_events},
        {"nbdkeeper_stuck_kills_total", "Live rbd-nbd servers ended as stuck, then re-attached.", c.stuck_kills},
        {"nbdkeeper_stalls_held_by_cluster_total", "Device stalls past the stuck-IO limit that the cluster held.",
         c.stalls_held_by_cluster},
        {"nbdkeeper_unmaps_total", "Planned unmaps.", c.unmaps},
    };
    for (const Counter& k : counters) {
      w.Family(k.name, k.help, "counter");
      w.Sample(k.name, {}, static_cast<double>(k.value));
    }
    w.Family("nbdkeeper_reattach_seconds",
             "Seconds from an rbd-nbd's death to its re-attach on the same device: how long the device held its IO.",
             "histogram");
    w.Histogram("nbdkeeper_reattach_seconds", {}, sup->reattach_seconds());
    // Every state of every volume, 1 for its current one: an alert on a
    // state needs no absent() for the volumes that are not in it.
    w.Family("nbdkeeper_volume_state", "1 for each volume's current mapping state, 0 for its other states.", "gauge");
    for (const MappingSnapshot& s : sup->Snapshots()) {
      std::string image = s.snap.empty() ? s.image : s.image + "@" + s.snap;
      for (int i = 0; i < kMappingStateCount; ++i) {
        auto state = static_cast<MappingState>(i);
        w.Sample("nbdkeeper_volume_state",
                 {{"volume", s.volume_id}, {"image", image}, {"state", std::string(MappingStateName(state))}},
                 s.state == state ? 1 : 0);
      }
    }
    w.Family("nbdkeeper_mapping_transitions_total", "Mapping state transitions.", "counter");
    for (const TransitionCount& t : sup->transitions().NonZero()) {
      w.Sample("nbdkeeper_mapping_transitions_total",
               {{"from", std::string(MappingStateName(t.from))}, {"to", std::string(MappingStateName(t.to))}},
               static_cast<double>(t.count));
    }
    w.Family("nbdkeeper_mappings", "Mappings by current state.", "gauge");
    auto by_state = sup->CountByState();
    for (int i = 0; i < kMappingStateCount; ++i) {
      w.Sample("nbdkeeper_mappings", {{"state", std::string(MappingStateName(static_cast<MappingState>(i)))}},
               static_cast<double>(by_state[i]));
    }
    w.Family("nbdkeeper_attaches_in_flight", "rbd-nbd maps and attaches holding an attach slot.", "gauge");
    w.Sample("nbdkeeper_attaches_in_flight", {}, static_cast<double>(sup->attaches_in_flight()));
    w.Family("nbdkeeper_attaches_waiting", "rbd-nbd maps and attaches waiting for an attach slot.", "gauge");
    w.Sample("nbdkeeper_attaches_waiting", {}, static_cast<double>(sup->attaches_waiting()));
    w.Family("nbdkeeper_staged_volumes", "Volumes in the node journal.", "gauge");
    w.Sample("nbdkeeper_staged_volumes", {}, static_cast<double>(vols->All().size()));
    w.Family("nbdkeeper_journal_quarantined_records",
             "Node journal records found damaged at start and moved aside; their volumes are left alone.", "gauge");
    w.Sample("nbdkeeper_journal_quarantined_records", {}, static_cast<double>(vols->Quarantined().size()));
  });
}

}  // namespace nbdk
