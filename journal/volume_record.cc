#include "journal/volume_record.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <limits>

#include "base/json_writer.h"

namespace nbdk {
namespace {

// Reads the members of one JSON object, naming the field in every error
// ("field published_targets[0].path: missing").
class FieldReader {
 public:
  FieldReader(const rapidjson::Value& object, std::string prefix) : object_(object), prefix_(std::move(prefix)) {}

  Status String(const char* name, std::string* out) const {
    const rapidjson::Value* v;
    NBDK_RETURN_IF_ERROR(Find(name, &v));
    if (!v->IsString()) return Wrong(name, "a string");
    out->assign(v->GetString(), v->GetStringLength());
    return Status::Ok();
  }

  Status Strings(const char* name, std::vector<std::string>* out) const {
    const rapidjson::Value* v;
    NBDK_RETURN_IF_ERROR(Find(name, &v));
    if (!v->IsArray()) return Wrong(name, "an array of strings");
    out->clear();
    for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
      const rapidjson::Value& e = (*v)[i];
      if (!e.IsString()) return Wrong(Indexed(name, i), "a string");
      out->emplace_back(e.GetString(), e.GetStringLength());
    }
    return Status::Ok();
  }

  Status Bool(const char* name, bool* out) const {
    const rapidjson::Value* v;
    NBDK_RETURN_IF_ERROR(Find(name, &v));
    if (!v->IsBool()) return Wrong(name, "a boolean");
    *out = v->GetBool();
    return Status::Ok();
  }

  // A member newer daemons write: absent in an older record means `absent`.
  Status OptionalBool(const char* name, bool absent, bool* out) const {
    if (object_.FindMember(name) == object_.MemberEnd()) {
      *out = absent;
      return Status::Ok();
    }
    return Bool(name, out);
  }

  bool Has(const char* name) const { return object_.FindMember(name) != object_.MemberEnd(); }

  // A string member newer daemons write: absent in an older record is "".
  Status OptionalString(const char* name, std::string* out) const {
    out->clear();
    if (!Has(name)) return Status::Ok();
    return String(name, out);
  }

  // An array member newer daemons write: absent in an older record is empty.
  Status OptionalStrings(const char* name, std::vector<std::string>* out) const {
    out->clear();
    if (!Has(name)) return Status::Ok();
    return Strings(name, out);
  }

  // An array of CephClient::ToString texts; absent is empty.
  Status OptionalClients(const char* name, std::vector<CephClient>* out) const {
    std::vector<std::string> texts;
    NBDK_RETURN_IF_ERROR(OptionalStrings(name, &texts));
    out->clear();
    for (size_t i = 0; i < texts.size(); ++i) {
      Result<CephClient> client = ParseCephClient(texts[i]);
      if (!client.ok()) return Status::Corruption("field " + Indexed(name, i) + ": " + client.status().message());
      out->push_back(std::move(client).value());
    }
    return Status::Ok();
  }

  Status Int64(const char* name, int64_t min, int64_t max, int64_t* out) const {
    const rapidjson::Value* v;
    NBDK_RETURN_IF_ERROR(Find(name, &v));
    if (!v->IsInt64() || v->GetInt64() < min || v->GetInt64() > max) {
      return Wrong(name, "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    }
    *out = v->GetInt64();
    return Status::Ok();
  }

  // Objects in an array member: `each(reader_of_element)` per element.
  template <typename Fn>
  Status Objects(const char* name, Fn each) const {
    const rapidjson::Value* v;
    NBDK_RETURN_IF_ERROR(Find(name, &v));
    if (!v->IsArray()) return Wrong(name, "an array of objects");
    for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
      std::string element = Indexed(name, i);
      if (!(*v)[i].IsObject()) return Wrong(element, "an object");
      NBDK_RETURN_IF_ERROR(each(FieldReader((*v)[i], prefix_ + element + ".")));
    }
    return Status::Ok();
  }

  Status Empty(const char* name) const { return Status::Corruption("field " + prefix_ + name + ": empty"); }

 private:
  Status Find(const char* name, const rapidjson::Value** out) const {
    auto it = object_.FindMember(name);
    if (it == object_.MemberEnd()) return Status::Corruption("field " + prefix_ + name + ": missing");
    *out = &it->value;
    return Status::Ok();
  }
  static std::string Indexed(const char* name, size_t i) { return std::string(name) + "[" + std::to_string(i) + "]"; }
  Status Wrong(std::string_view name, const std::string& expected) const {
    return Status::Corruption("field " + prefix_ + std::string(name) + ": expected " + expected);
  }

  const rapidjson::Value& object_;
  std::string prefix_;
};

Status DecodeFields(const FieldReader& f, VolumeRecord* r) {
  constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
  int64_t pid = 0, timeout = 0;
  NBDK_RETURN_IF_ERROR(f.String("volume_id", &r->volume_id));
  if (r->volume_id.empty()) return f.Empty("volume_id");
  NBDK_RETURN_IF_ERROR(f.String("cluster_id", &r->cluster_id));
  NBDK_RETURN_IF_ERROR(f.Strings("monitors", &r->monitors));
  NBDK_RETURN_IF_ERROR(f.String("pool", &r->pool));
  NBDK_RETURN_IF_ERROR(f.String("rados_namespace", &r->rados_namespace));
  NBDK_RETURN_IF_ERROR(f.String("image", &r->image));
  NBDK_RETURN_IF_ERROR(f.OptionalString("snap", &r->snap));
  if (f.Has("snap")) {
    Status name = CheckCephName("snap", r->snap, true);
    if (!name.ok()) return Status::Corruption("field " + name.message());
  }
  NBDK_RETURN_IF_ERROR(f.String("user_id", &r->user_id));
  NBDK_RETURN_IF_ERROR(f.String("keyfile_path", &r->keyfile_path));
  NBDK_RETURN_IF_ERROR(f.String("ceph_conf_path", &r->ceph_conf_path));
  NBDK_RETURN_IF_ERROR(f.String("nbd_device", &r->nbd_device));
  NBDK_RETURN_IF_ERROR(f.OptionalString("luks_mapper", &r->luks_mapper));
  NBDK_RETURN_IF_ERROR(f.String("cookie", &r->cookie));
  NBDK_RETURN_IF_ERROR(f.Strings("map_options", &r->map_options));
  NBDK_RETURN_IF_ERROR(f.String("fs_type", &r->fs_type));
  NBDK_RETURN_IF_ERROR(f.Bool("block", &r->block));
  NBDK_RETURN_IF_ERROR(f.Bool("read_only", &r->read_only));
  NBDK_RETURN_IF_ERROR(f.OptionalBool("multi_node", false, &r->multi_node));
  NBDK_RETURN_IF_ERROR(f.OptionalStrings("mount_flags", &r->mount_flags));
  NBDK_RETURN_IF_ERROR(f.String("staging_path", &r->staging_path));
  NBDK_RETURN_IF_ERROR(f.OptionalBool("mount_point_created", false, &r->mount_point_created));
  NBDK_RETURN_IF_ERROR(f.Objects("published_targets", [r](const FieldReader& t) {
    PublishedTarget target;
    NBDK_RETURN_IF_ERROR(t.String("path", &target.path));
    NBDK_RETURN_IF_ERROR(t.Bool("read_only", &target.read_only));
    NBDK_RETURN_IF_ERROR(t.OptionalBool("created", false, &target.created));
    NBDK_RETURN_IF_ERROR(t.OptionalStrings("mount_flags", &target.mount_flags));
    NBDK_RETURN_IF_ERROR(t.OptionalBool("single_writer", false, &target.single_writer));
    r->published_targets.push_back(std::move(target));
    return Status::Ok();
  }));
  NBDK_RETURN_IF_ERROR(f.Int64("rbd_nbd_pid", 0, std::numeric_limits<int32_t>::max(), &pid));
  r->rbd_nbd_pid = static_cast<int32_t>(pid);
  NBDK_RETURN_IF_ERROR(f.OptionalClients("rbd_clients", &r->rbd_clients));
  if (f.Has("rbd_clients_before")) {
    r->rbd_clients_before.emplace();
    NBDK_RETURN_IF_ERROR(f.OptionalClients("rbd_clients_before", &*r->rbd_clients_before));
  }
  NBDK_RETURN_IF_ERROR(f.String("boot_id", &r->boot_id));
  NBDK_RETURN_IF_ERROR(f.Int64("reattach_timeout_s", 0, std::numeric_limits<uint32_t>::max(), &timeout));
  r->reattach_timeout_s = static_cast<uint32_t>(timeout);
  NBDK_RETURN_IF_ERROR(f.Int64("created_ms", 0, kInt64Max, &r->created_ms));
  NBDK_RETURN_IF_ERROR(f.Int64("updated_ms", 0, kInt64Max, &r->updated_ms));
  std::string state;
  NBDK_RETURN_IF_ERROR(f.String("state", &state));
  if (state.empty()) return f.Empty("state");
  std::optional<VolumeState> parsed = ParseVolumeState(state);
  if (!parsed) return Status::Corruption("field state: '" + state + "' is neither staging nor staged");
  r->state = *parsed;
  return Status::Ok();
}

std::vector<std::string> ClientTexts(const std::vector<CephClient>& clients) {
  std::vector<std::string> texts;
  for (const CephClient& c : clients) texts.push_back(c.ToString());
  return texts;
}

}  // namespace

std::string_view VolumeStateName(VolumeState state) {
  switch (state) {
    case VolumeState::kStaging:
      return "staging";
    case VolumeState::kStaged:
      return "staged";
  }
  return "staging";
}

std::optional<VolumeState> ParseVolumeState(std::string_view name) {
  for (VolumeState s : {VolumeState::kStaging, VolumeState::kStaged}) {
    if (name == VolumeStateName(s)) return s;
  }
  return std::nullopt;
}

ImageSpec RecordedImage(const VolumeRecord& record) {
  ImageSpec image;
  image.pool = record.pool;
  image.rados_namespace = record.rados_namespace;
  image.image = record.image;
  image.snap = record.snap;
  image.monitors = record.monitors;
  image.ceph_conf = record.ceph_conf_path;
  image.user_id = record.user_id;
  image.keyfile = record.keyfile_path;
  return image;
}

std::string EncodeVolumeRecord(const VolumeRecord& r) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  WriteJsonMember(w, "volume_id", r.volume_id);
  WriteJsonMember(w, "cluster_id", r.cluster_id);
  WriteJsonMember(w, "monitors", r.monitors);
  WriteJsonMember(w, "pool", r.pool);
  WriteJsonMember(w, "rados_namespace", r.rados_namespace);
  WriteJsonMember(w, "image", r.image);
  if (!r.snap.empty()) WriteJsonMember(w, "snap", r.snap);
  WriteJsonMember(w, "user_id", r.user_id);
  WriteJsonMember(w, "keyfile_path", r.keyfile_path);
  WriteJsonMember(w, "ceph_conf_path", r.ceph_conf_path);
  WriteJsonMember(w, "nbd_device", r.nbd_device);
  if (!r.luks_mapper.empty()) WriteJsonMember(w, "luks_mapper", r.luks_mapper);
  WriteJsonMember(w, "cookie", r.cookie);
  WriteJsonMember(w, "map_options", r.map_options);
  WriteJsonMember(w, "fs_type", r.fs_type);
  w.Key("block");
  w.Bool(r.block);
  w.Key("read_only");
  w.Bool(r.read_only);
  if (r.multi_node) {
    w.Key("multi_node");
    w.Bool(true);
  }
  WriteJsonMember(w, "mount_flags", r.mount_flags);
  WriteJsonMember(w, "staging_path", r.staging_path);
  w.Key("mount_point_created");
  w.Bool(r.mount_point_created);
  w.Key("published_targets");
  w.StartArray();
  for (const PublishedTarget& t : r.published_targets) {
    w.StartObject();
    WriteJsonMember(w, "path", t.path);
    w.Key("read_only");
    w.Bool(t.read_only);
    w.Key("created");
    w.Bool(t.created);
    WriteJsonMember(w, "mount_flags", t.mount_flags);
    if (t.single_writer) {
      w.Key("single_writer");
      w.Bool(true);
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("rbd_nbd_pid");
  w.Int(r.rbd_nbd_pid);
  if (!r.rbd_clients.empty()) WriteJsonMember(w, "rbd_clients", ClientTexts(r.rbd_clients));
  if (r.rbd_clients_before) WriteJsonMember(w, "rbd_clients_before", ClientTexts(*r.rbd_clients_before));
  WriteJsonMember(w, "boot_id", r.boot_id);
  w.Key("reattach_timeout_s");
  w.Uint(r.reattach_timeout_s);
  w.Key("created_ms");
  w.Int64(r.created_ms);
  w.Key("updated_ms");
  w.Int64(r.updated_ms);
  WriteJsonMember(w, "state", VolumeStateName(r.state));
  w.EndObject();
  return JsonText(buf);
}

Result<VolumeRecord> DecodeVolumeRecord(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return Status::Corruption("JSON parse error at offset " + std::to_string(doc.GetErrorOffset()) + ": " +
                              rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsObject()) return Status::Corruption("expected a JSON object");
  VolumeRecord record;
  NBDK_RETURN_IF_ERROR(DecodeFields(FieldReader(doc, ""), &record));
  return record;
}

}  // namespace nbdk
