#include "csi/controller/topology_pools.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <strings.h>

#include <algorithm>
#include <map>

#include "base/quote_field.h"
#include "ceph/image_spec.h"
#include "csi/go_json.h"

namespace nbdk {
namespace {

std::string_view Text(const rapidjson::Value& v) { return {v.GetString(), v.GetStringLength()}; }

// Every key of `object` names one of `known` (as GoField matches them), and
// each field once: a key nbdkeeper does not read, or a field given again
// (under another spelling too), is refused by name. Nulls count as absent.
Status OnlyKnownKeys(const rapidjson::Value& object, std::initializer_list<const char*> known,
                     const std::string& where) {
  for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it) {
    if (it->value.IsNull()) continue;
    auto field = std::find_if(known.begin(), known.end(),
                              [&](const char* k) { return ::strcasecmp(it->name.GetString(), k) == 0; });
    if (field == known.end()) {
      return Status::InvalidArgument(where + QuoteField(Text(it->name)) + ": not a key of topologyConstrainedPools");
    }
    if (GoField(object, *field) != &it->value) return Status::InvalidArgument(where + *field + ": given twice");
  }
  return Status::Ok();
}

Result<std::string> StringField(const rapidjson::Value& object, const char* name, const std::string& where) {
  const rapidjson::Value* v = GoField(object, name);
  if (v == nullptr) return std::string();
  if (!v->IsString()) return Status::InvalidArgument(where + name + ": expected a string");
  return std::string(Text(*v));
}

Result<TopologyConstrainedPool> ParsePool(const rapidjson::Value& v, const std::string& where) {
  if (!v.IsObject()) return Status::InvalidArgument(where + "expected an object");
  NBDK_RETURN_IF_ERROR(OnlyKnownKeys(v, {"poolName", "dataPool", "domainSegments"}, where));
  TopologyConstrainedPool out;
  auto pool = StringField(v, "poolName", where);
  if (!pool.ok()) return pool.status();
  NBDK_RETURN_IF_ERROR(CheckCephName(where + "poolName", *pool, true));
  out.pool = std::move(*pool);
  auto data_pool = StringField(v, "dataPool", where);
  if (!data_pool.ok()) return data_pool.status();
  NBDK_RETURN_IF_ERROR(CheckCephName(where + "dataPool", *data_pool, false));
  out.data_pool = std::move(*data_pool);
  const rapidjson::Value* segments = GoField(v, "domainSegments");
  if (segments == nullptr) return out;
  if (!segments->IsArray()) return Status::InvalidArgument(where + "domainSegments: expected an array");
  for (rapidjson::SizeType i = 0; i < segments->Size(); ++i) {
    const rapidjson::Value& s = (*segments)[i];
    std::string at = where + "domainSegments[" + std::to_string(i) + "].";
    if (!s.IsObject()) return Status::InvalidArgument(at.substr(0, at.size() - 1) + ": expected an object");
    NBDK_RETURN_IF_ERROR(OnlyKnownKeys(s, {"domainLabel", "value"}, at));
    auto label = StringField(s, "domainLabel", at);
    if (!label.ok()) return label.status();
    auto value = StringField(s, "value", at);
    if (!value.ok()) return value.status();
    if (label->empty()) return Status::InvalidArgument(at + "domainLabel: missing");
    out.segments.emplace_back(std::move(*label), std::move(*value));
  }
  return out;
}

// The pools (in their order) whose every segment the topology has.
const TopologyConstrainedPool* Match(const std::vector<TopologyConstrainedPool>& pools, std::string_view only_pool,
                                     const csi::v1::Topology& topology) {
  std::map<std::string_view, std::string_view> domains;
  for (const auto& [key, value] : topology.segments()) domains[LabelName(key)] = value;
  for (const TopologyConstrainedPool& p : pools) {
    if (!only_pool.empty() && p.pool != only_pool) continue;
    bool all = std::all_of(p.segments.begin(), p.segments.end(), [&](const auto& s) {
      auto it = domains.find(s.first);
      return it != domains.end() && it->second == s.second;
    });
    if (all) return &p;
  }
  return nullptr;
}

}  // namespace

Result<std::vector<TopologyConstrainedPool>> ParseTopologyConstrainedPools(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  const std::string field = "parameters.topologyConstrainedPools";
  if (doc.HasParseError()) {
    return Status::InvalidArgument(field + ": invalid JSON at offset " + std::to_string(doc.GetErrorOffset()) + ": " +
                                   rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsArray() || doc.Empty()) return Status::InvalidArgument(field + ": expected a non-empty JSON array");
  std::vector<TopologyConstrainedPool> out;
  for (rapidjson::SizeType i = 0; i < doc.Size(); ++i) {
    auto pool = ParsePool(doc[i], field + "[" + std::to_string(i) + "].");
    if (!pool.ok()) return pool.status();
    out.push_back(std::move(*pool));
  }
  return out;
}

Result<TopologyChoice> ChooseTopologyPool(const std::vector<TopologyConstrainedPool>& pools,
                                          const csi::v1::TopologyRequirement& requirement, std::string_view only_pool) {
  for (const auto* list : {&requirement.preferred(), &requirement.requisite()}) {
    for (const csi::v1::Topology& topology : *list) {
      if (const TopologyConstrainedPool* p = Match(pools, only_pool, topology)) {
        return TopologyChoice{p->pool, p->data_pool, {topology.segments().begin(), topology.segments().end()}};
      }
    }
  }
  std::string names;
  for (const TopologyConstrainedPool& p : pools) {
    if (only_pool.empty() || p.pool == only_pool) names += (names.empty() ? "" : ", ") + p.pool;
  }
  return Status::ResourceExhausted(
      "accessibility_requirements: no pool of topologyConstrainedPools (" + (names.empty() ? "none" : names) +
      (only_pool.empty() ? "" : ", the source's pool " + QuoteField(only_pool)) + ") is in a requested topology");
}

}  // namespace nbdk
