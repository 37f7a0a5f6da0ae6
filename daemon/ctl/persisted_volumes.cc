#include "daemon/ctl/persisted_volumes.h"

#include <fcntl.h>
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "base/durable_file.h"
#include "base/json_writer.h"
#include "base/quote_field.h"
#include "journal/volume_id.h"

namespace nbdk::ctl {
namespace {

Status ReadEntry(const rapidjson::Value& v, const std::string& where, PersistedVolume* out) {
  if (!v.IsObject()) return Status::Corruption(where + ": not an object");
  auto str = [&](const char* key, std::string* field, bool required) -> Status {
    auto it = v.FindMember(key);
    if (it == v.MemberEnd()) return required ? Status::Corruption(where + "." + key + ": missing") : Status::Ok();
    if (!it->value.IsString()) return Status::Corruption(where + "." + key + ": expected a string");
    *field = it->value.GetString();
    return Status::Ok();
  };
  auto strings = [&](const char* key, std::vector<std::string>* field) -> Status {
    auto it = v.FindMember(key);
    if (it == v.MemberEnd()) return Status::Ok();
    if (!it->value.IsArray()) return Status::Corruption(where + "." + key + ": expected an array of strings");
    for (const auto& e : it->value.GetArray()) {
      if (!e.IsString()) return Status::Corruption(where + "." + key + ": expected an array of strings");
      field->emplace_back(e.GetString());
    }
    return Status::Ok();
  };
  auto flag = [&](const char* key, bool* field) -> Status {
    auto it = v.FindMember(key);
    if (it == v.MemberEnd()) return Status::Ok();
    if (!it->value.IsBool()) return Status::Corruption(where + "." + key + ": expected a boolean");
    *field = it->value.GetBool();
    return Status::Ok();
  };
  std::string image;
  MapSpec& s = out->spec;
  NBDK_RETURN_IF_ERROR(str("image", &image, true));
  NBDK_RETURN_IF_ERROR(ParseImageSpec(image, &s).WithContext(where + ".image"));
  NBDK_RETURN_IF_ERROR(str("cluster", &s.cluster, false));
  NBDK_RETURN_IF_ERROR(str("id", &s.user_id, false));
  NBDK_RETURN_IF_ERROR(str("keyfile", &s.keyfile, false));
  NBDK_RETURN_IF_ERROR(str("fs", &s.fs_type, false));
  NBDK_RETURN_IF_ERROR(str("mount", &s.mount, false));
  NBDK_RETURN_IF_ERROR(str("volume_id", &out->volume_id, false));
  NBDK_RETURN_IF_ERROR(str("options", &s.map_options, false));
  NBDK_RETURN_IF_ERROR(strings("mount_options", &s.mount_options));
  NBDK_RETURN_IF_ERROR(str("encrypt", &s.passphrase_file, false));
  NBDK_RETURN_IF_ERROR(flag("block", &s.block));
  NBDK_RETURN_IF_ERROR(flag("ro", &s.read_only));
  // A hand-written entry names an existing image: its volume ID is what
  // `map` gives one.
  if (out->volume_id.empty()) out->volume_id = StaticVolumeId(s);
  NBDK_RETURN_IF_ERROR(ValidateVolumeId(out->volume_id).WithContext(where));
  if (Status rules = CheckMapSpec(s); !rules.ok()) return Status::Corruption(where + "." + rules.message());
  return Status::Ok();
}

}  // namespace

Result<std::vector<PersistedVolume>> LoadPersisted(const std::string& path) {
  // O_NONBLOCK: a FIFO planted at the path must fail the check, not hang.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 && errno == ENOENT) return std::vector<PersistedVolume>();
  if (fd < 0) return Status::FromErrno(errno, "open " + path);
  struct stat st;
  bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  ::close(fd);
  if (!regular) return Status::FailedPrecondition(path + ": not a regular file");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse(text.str().c_str());
  if (doc.HasParseError() || !doc.IsObject()) return Status::Corruption(path + ": not a JSON object");
  auto list = doc.FindMember("volumes");
  if (list == doc.MemberEnd() || !list->value.IsArray()) return Status::Corruption(path + ": no \"volumes\" array");
  std::vector<PersistedVolume> out;
  for (rapidjson::SizeType i = 0; i < list->value.Size(); ++i) {
    PersistedVolume v;
    NBDK_RETURN_IF_ERROR(ReadEntry(list->value[i], path + ": volumes[" + std::to_string(i) + "]", &v));
    out.push_back(std::move(v));
  }
  return out;
}

Status SavePersisted(const std::string& path, const std::vector<PersistedVolume>& volumes) {
  rapidjson::StringBuffer buf;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("volumes");
  w.StartArray();
  for (const PersistedVolume& v : volumes) {
    w.StartObject();
    WriteJsonMember(w, "image", v.spec.Spec());
    WriteJsonMember(w, "cluster", v.spec.cluster);
    WriteJsonMember(w, "id", v.spec.user_id);
    WriteJsonMember(w, "keyfile", v.spec.keyfile);
    WriteJsonMember(w, "fs", v.spec.fs_type);
    w.Key("block");
    w.Bool(v.spec.block);
    WriteJsonMember(w, "mount", v.spec.mount);
    WriteJsonMember(w, "mount_options", v.spec.mount_options);
    WriteJsonMember(w, "options", v.spec.map_options);
    if (!v.spec.passphrase_file.empty()) WriteJsonMember(w, "encrypt", v.spec.passphrase_file);
    w.Key("ro");
    w.Bool(v.spec.read_only);
    WriteJsonMember(w, "volume_id", v.volume_id);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  std::string body = JsonText(buf) + "\n";
  std::string dir = path.substr(0, path.rfind('/'));
  if (!dir.empty()) NBDK_RETURN_IF_ERROR(MakeDirectoryDurably(dir, 0755));
  return ReplaceFileDurably(path, body, 0644);
}

}  // namespace nbdk::ctl
