#include "daemon/ctl/volume_table.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <cstdio>

#include "base/json_writer.h"
#include "ceph/image_spec.h"

namespace nbdk::ctl {
namespace {

std::string Str(const rapidjson::Value& v, const char* key) {
  auto it = v.FindMember(key);
  return it != v.MemberEnd() && it->value.IsString() ? std::string(it->value.GetString()) : std::string();
}

std::string Ago(double seconds) {
  char buf[32];
  if (seconds < 120)
    std::snprintf(buf, sizeof(buf), "%.0fs ago", seconds);
  else if (seconds < 7200)
    std::snprintf(buf, sizeof(buf), "%.0fm ago", seconds / 60);
  else
    std::snprintf(buf, sizeof(buf), "%.0fh ago", seconds / 3600);
  return buf;
}

const char* Colour(const std::string& state) {
  if (state == "Connected") return "\033[32m";
  if (state == "Expired" || state == "Fenced" || state == "Unmapped" || state == "StaleBoot" || state == "Failed")
    return "\033[31m";
  return "\033[33m";
}

}  // namespace

std::string VolumeRow::MountPoint() const {
  if (!targets.empty()) return targets.front();
  if (access != "block" && !staging_path.empty()) return staging_path + "/" + volume_id;
  return "";
}

Result<DaemonStatus> ParseDaemonStatus(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return Status::Corruption("/status: not a JSON object");
  DaemonStatus out;
  out.version = Str(doc, "version");
  auto ready = doc.FindMember("ready");
  out.ready = ready != doc.MemberEnd() && ready->value.IsBool() && ready->value.GetBool();
  auto volumes = doc.FindMember("volumes");
  if (volumes == doc.MemberEnd() || !volumes->value.IsArray()) return Status::Corruption("/status: no volumes array");
  for (const auto& v : volumes->value.GetArray()) {
    if (!v.IsObject()) return Status::Corruption("/status: a volume is not an object");
    VolumeRow row;
    row.volume_id = Str(v, "volume_id");
    row.image = Str(v, "image");
    row.snap = Str(v, "snap");
    row.access = Str(v, "access");
    row.journal_state = Str(v, "journal_state");
    row.state = Str(v, "state");
    row.device = Str(v, "device");
    row.staging_path = Str(v, "staging_path");
    row.log = Str(v, "log");
    row.cgroup_mode = Str(v, "cgroup_mode");
    row.scope = Str(v, "scope");
    row.link = Str(v, "link");
    row.luks_mapper = Str(v, "luks_mapper");
    if (auto it = v.FindMember("pid"); it != v.MemberEnd() && it->value.IsInt()) row.pid = it->value.GetInt();
    if (auto it = v.FindMember("restarts"); it != v.MemberEnd() && it->value.IsUint())
      row.restarts = it->value.GetUint();
    if (auto it = v.FindMember("seconds_in_state"); it != v.MemberEnd() && it->value.IsNumber()) {
      row.seconds_in_state = it->value.GetDouble();
    }
    if (auto it = v.FindMember("targets"); it != v.MemberEnd() && it->value.IsArray()) {
      for (const auto& t : it->value.GetArray()) {
        if (t.IsString()) row.targets.emplace_back(t.GetString());
      }
    }
    out.volumes.push_back(std::move(row));
  }
  return out;
}

const VolumeRow* FindVolume(const DaemonStatus& status, const std::string& key) {
  const VolumeRow* by_name = nullptr;
  int named = 0;
  for (const VolumeRow& v : status.volumes) {
    std::string spec = v.Spec();
    if (v.volume_id == key || spec == key || (!v.device.empty() && v.device == key) || v.staging_path == key ||
        v.MountPoint() == key || std::find(v.targets.begin(), v.targets.end(), key) != v.targets.end()) {
      return &v;
    }
    if (spec.size() > key.size() && spec.ends_with("/" + key)) {
      by_name = &v;
      ++named;
    }
  }
  return named == 1 ? by_name : nullptr;
}

std::string RenderTable(const DaemonStatus& status, bool colour) {
  std::vector<std::vector<std::string>> rows = {
      {"VOLUME", "IMAGE", "DEVICE", "STATE", "PID", "RESTARTS", "LAST HEAL", "MOUNT POINT"}};
  for (const VolumeRow& v : status.volumes) {
    std::string heal = v.restarts > 0 && v.state == "Connected" ? Ago(v.seconds_in_state) : "-";
    std::string device = v.device.empty() ? "-" : v.device;
    if (!v.luks_mapper.empty()) device += " (" + v.luks_mapper + ")";
    rows.push_back({v.volume_id, v.Spec(), device, v.state, v.pid > 0 ? std::to_string(v.pid) : "-",
                    std::to_string(v.restarts), heal, v.MountPoint().empty() ? "-" : v.MountPoint()});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  for (size_t n = 0; n < rows.size(); ++n) {
    for (size_t i = 0; i < rows[n].size(); ++i) {
      std::string cell = rows[n][i];
      cell.resize(i + 1 == rows[n].size() ? cell.size() : width[i], ' ');
      bool paint = colour && n > 0 && i == 3;
      out += (paint ? Colour(rows[n][i]) : "") + cell + (paint ? "\033[0m" : "");
      if (i + 1 < rows[n].size()) out += "  ";
    }
    out += "\n";
  }
  if (status.volumes.empty()) out += "(no volumes)\n";
  return out;
}

std::string RenderJson(const DaemonStatus& status) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartArray();
  for (const VolumeRow& v : status.volumes) {
    ImageSpec image;
    if (!SplitImagePath(v.image, &image)) image.image = v.image;
    w.StartObject();
    // `rbd device list --format json`'s keys, as rbd-nbd fills them.
    w.Key("id");
    w.Int(v.pid);
    WriteJsonMember(w, "pool", image.pool);
    WriteJsonMember(w, "namespace", image.rados_namespace);
    WriteJsonMember(w, "image", image.image);
    WriteJsonMember(w, "snap", v.snap.empty() ? "-" : v.snap);
    WriteJsonMember(w, "device", v.device);
    // nbdkeeper's own.
    WriteJsonMember(w, "volume", v.volume_id);
    WriteJsonMember(w, "spec", v.Spec());
    WriteJsonMember(w, "link", v.link);
    if (!v.luks_mapper.empty()) WriteJsonMember(w, "luks_mapper", v.luks_mapper);
    WriteJsonMember(w, "access", v.access);
    WriteJsonMember(w, "state", v.state);
    w.Key("pid");
    w.Int(v.pid);
    w.Key("restarts");
    w.Uint(v.restarts);
    w.Key("seconds_in_state");
    w.Double(v.seconds_in_state);
    WriteJsonMember(w, "mount_point", v.MountPoint());
    WriteJsonMember(w, "cgroup_mode", v.cgroup_mode);
    WriteJsonMember(w, "scope", v.scope);
    WriteJsonMember(w, "targets", v.targets);
    w.EndObject();
  }
  w.EndArray();
  return JsonText(buf) + "\n";
}

}  // namespace nbdk::ctl
