#include "csi/cluster_config.h"

#include <dirent.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <set>
#include <sstream>

#include "base/quote_field.h"
#include "ceph/ceph_conf.h"
#include "csi/go_json.h"
#include "csi/topology.h"

namespace nbdk {
namespace {

Result<ClusterEntry> ParseEntry(const rapidjson::Value& v) {
  if (!v.IsObject()) return Status::InvalidArgument("expected an object");
  ClusterEntry entry;

  const rapidjson::Value* id = GoField(v, "clusterID");
  if (id == nullptr) return Status::InvalidArgument("clusterID: missing");
  if (!id->IsString()) return Status::InvalidArgument("clusterID: expected a string");
  if (id->GetStringLength() == 0) return Status::InvalidArgument("clusterID: must not be empty");
  entry.cluster_id.assign(id->GetString(), id->GetStringLength());

  const rapidjson::Value* mons = GoField(v, "monitors");
  if (mons == nullptr) return Status::InvalidArgument("monitors: missing");
  if (!mons->IsArray()) return Status::InvalidArgument("monitors: expected an array of strings");
  if (mons->Empty()) return Status::InvalidArgument("monitors: must not be empty");
  for (rapidjson::SizeType i = 0; i < mons->Size(); ++i) {
    const rapidjson::Value& m = (*mons)[i];
    std::string field = "monitors[" + std::to_string(i) + "]: ";
    if (!m.IsString()) return Status::InvalidArgument(field + "expected a string");
    if (m.GetStringLength() == 0) return Status::InvalidArgument(field + "must not be empty");
    entry.monitors.emplace_back(m.GetString(), m.GetStringLength());
  }

  if (const rapidjson::Value* rbd = GoField(v, "rbd")) {
    if (!rbd->IsObject()) return Status::InvalidArgument("rbd: expected an object");
    if (const rapidjson::Value* ns = GoField(*rbd, "radosNamespace")) {
      if (!ns->IsString()) return Status::InvalidArgument("rbd.radosNamespace: expected a string");
      entry.rados_namespace.assign(ns->GetString(), ns->GetStringLength());
    }
  }

  if (const rapidjson::Value* affinity = GoField(v, "readAffinity")) {
    if (!affinity->IsObject()) return Status::InvalidArgument("readAffinity: expected an object");
    if (const rapidjson::Value* enabled = GoField(*affinity, "enabled")) {
      if (!enabled->IsBool()) return Status::InvalidArgument("readAffinity.enabled: expected true or false");
      entry.read_affinity = enabled->GetBool();
    }
    if (const rapidjson::Value* labels = GoField(*affinity, "crushLocationLabels")) {
      if (!labels->IsArray()) return Status::InvalidArgument("readAffinity.crushLocationLabels: expected an array");
      for (rapidjson::SizeType i = 0; i < labels->Size(); ++i) {
        const rapidjson::Value& l = (*labels)[i];
        std::string field = "readAffinity.crushLocationLabels[" + std::to_string(i) + "]";
        if (!l.IsString()) return Status::InvalidArgument(field + ": expected a string");
        std::string key(l.GetString(), l.GetStringLength());
        NBDK_RETURN_IF_ERROR(CheckLabelKey(key, field));
        entry.crush_location_labels.push_back(std::move(key));
      }
    }
  }
  return entry;
}

}  // namespace

Result<ClusterEntry> ClusterConfig::Find(std::string_view cluster_id) const {
  for (const ClusterEntry& e : entries_) {
    if (e.cluster_id == cluster_id) return e;
  }
  // The node's configuration lacks it: the CO cannot fix that by retrying.
  std::string message = "cluster ID " + QuoteField(cluster_id) + " is not in " + source_;
  for (const std::string& s : skipped_) message += "; skipped " + s;
  return Status::FailedPrecondition(message);
}

Result<ClusterConfig> ParseClusterConfig(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return Status::InvalidArgument("invalid JSON at offset " + std::to_string(doc.GetErrorOffset()) + ": " +
                                   rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsArray()) return Status::InvalidArgument("top level must be a JSON array of cluster entries");

  std::vector<ClusterEntry> entries;
  std::set<std::string, std::less<>> seen;
  for (rapidjson::SizeType i = 0; i < doc.Size(); ++i) {
    std::string where = "entry " + std::to_string(i);
    auto entry = ParseEntry(doc[i]);
    if (!entry.ok()) return entry.status().WithContext(where);
    if (!seen.insert(entry->cluster_id).second) {
      return Status::InvalidArgument(where + ": clusterID: " + QuoteField(entry->cluster_id) +
                                     " appears in an earlier entry");
    }
    entries.push_back(std::move(entry).value());
  }
  return ClusterConfig(std::move(entries));
}

Result<ClusterConfig> LoadClusterConfig(const std::string& path) {
  std::ifstream in(path);
  // Every problem here is the node's configuration, never the request's:
  // FAILED_PRECONDITION naming the setting, not NOT_FOUND or INVALID_ARGUMENT.
  std::string what = "ceph_csi_config " + path;
  if (!in) return Status::FailedPrecondition(Status::FromErrno(errno, what).message());
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::FailedPrecondition(what + ": read failed");
  auto config = ParseClusterConfig(text.str());
  if (!config.ok()) return Status::FailedPrecondition(what + ": " + config.status().message());
  return config;
}

Result<ClusterConfig> LoadClusters(const std::string& config_json, const std::string& ceph_dir) {
  if (::access(config_json.c_str(), F_OK) == 0 || errno != ENOENT) return LoadClusterConfig(config_json);
  std::vector<std::string> names;
  if (DIR* dir = ::opendir(ceph_dir.c_str())) {
    while (const dirent* e = ::readdir(dir)) {
      std::string file = e->d_name;
      if (file.size() > 5 && file.ends_with(".conf") && file.front() != '.') names.push_back(file);
    }
    ::closedir(dir);
  }
  std::sort(names.begin(), names.end());
  std::vector<ClusterEntry> entries;
  std::vector<std::string> skipped;
  for (const std::string& file : names) {
    std::string path = ceph_dir + "/" + file;
    auto conf = LoadCephConf(path);
    if (!conf.ok()) {
      skipped.push_back(conf.status().message());
      continue;
    }
    ClusterEntry entry;
    entry.cluster_id = conf->Get("fsid", "");
    if (entry.cluster_id.empty()) {
      skipped.push_back(path + ": no fsid in [global] (`ceph fsid` prints it)");
      continue;
    }
    entry.name = file.substr(0, file.size() - 5);
    entry.ceph_conf = path;
    entry.monitors = SplitMonHost(conf->Get("mon_host", ""));
    entries.push_back(std::move(entry));
  }
  return ClusterConfig(std::move(entries),
                       "any " + ceph_dir + "/*.conf's fsid (no ceph-csi cluster config " + config_json + ")",
                       std::move(skipped));
}

}  // namespace nbdk
